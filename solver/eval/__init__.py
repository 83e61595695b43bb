"""Evaluation of the solver, apart from the solver itself (docs/design.md §4.5).

- :mod:`.posing`: animated world matrices for one turning bone (tests, calibration, benches);
- :mod:`.measure`, :mod:`.quality`, :mod:`.hair_mesh`: the hair-quality run on the standard
  head turn (:mod:`avatars.clips.head_turn`) and its measures (stretch, penetration,
  settling, rest arc), with CPU skinning like the shader (:mod:`avatars.skinning`);
- :mod:`.tryon_quality`: the same measures on a fitted try-on hair (:mod:`avatars.tryon`):
  scalp drift, head and collider penetration of its skinned vertices;
- :mod:`.calibration`: fitting the VRM parameter mapping against the Verlet reference;
- :mod:`.synthetic`: synthetic avatars (hair caps, strands, branches) for tests and benches;
- :mod:`.bench`: ``swaycam bench solver``; :mod:`.reference`: three-vrm 3.5.5's spring bones
  in Node.js (installed by :mod:`avatars.eval.node`).
"""
