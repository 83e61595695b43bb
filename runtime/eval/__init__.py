"""Measurement of the runtime as a whole (the solver's own is :mod:`solver.eval`).

- :mod:`.hair_quality`: the hair-quality table of ``swaycam metrics`` (runs, Markdown, JSON,
  plots), with the frame-rate check of the product loop;
- :mod:`.rig_bench`: the substep and the 60 fps frame with the runtime's posing, injected
  into ``swaycam bench solver``;
- :mod:`.loop_bench`: ``swaycam bench loop`` (offline × real time, live latency);
- :mod:`.soak`: ``swaycam soak`` (a long headless live run: memory, GL objects, FDs, threads);
- the three-vrm references of motion and node constraints (:mod:`.motion_reference`,
  :mod:`.constraint_reference`; npm packages by :mod:`avatars.eval.node`), the try-on, VMC
  and panel benchmarks, the file-input fuzzer.
"""
