"""Evaluation of the solver, apart from the solver itself (DESIGN §4.5).

- :mod:`.head_turn`: the one standard head turn (metrics, benchmarks, fps checks, turn-test);
- :mod:`.posing`: animated world matrices for one turning bone (tests, calibration, benches);
- :mod:`.measure`, :mod:`.quality`, :mod:`.hair_mesh`, :mod:`.lbs`: the hair-quality run
  and its measures (stretch, penetration, settling, rest arc), CPU skinning like the shader;
- :mod:`.calibration`: fitting the VRM parameter mapping against the Verlet reference;
- :mod:`.synthetic`: synthetic avatars (hair caps, strands, branches) for tests and benches;
- :mod:`.bench`: ``swaycam bench solver``; :mod:`.reference`: three-vrm 3.5.5 in Node.js.
"""
