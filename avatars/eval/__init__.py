"""Evaluation beside the avatars (the lowest eval folder: every other one may import it).

- :mod:`.node`: the one Node.js/npm installer of the three-vrm references and their
  :class:`~avatars.eval.node.ReferenceUnavailable`;
- :mod:`.threevrm_load`: three-vrm loads a try-on export and steps its springs;
- :mod:`.fit_bench`: ``swaycam hair bench``, seconds to fit + rig a style and to reload it.

Product code never imports these (tests/test_layers.py).
"""
