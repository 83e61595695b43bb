"""The VMC protocol (OSC over UDP; protocol.vmc.info) — docs/design.md §11.

- :mod:`.sender`: :class:`VmcSender`, swaycam as a Performer (``--vmc-send HOST:PORT``):
  one bundle per sent frame with the root, every humanoid bone (normalized, local, Unity
  frame), every expression, Apply, OK (with the tracking status) and T;
- :mod:`.receiver`: :class:`VmcReceiver`, a UDP listener that validates untrusted datagrams
  (bounded names, finite values, counted drops) into the newest state;
- :mod:`.input`: :class:`VmcInput`, that state as the loop's pose input (Marionette: the
  sender drives body, head and expressions; Assistant: its face replaces or merges with
  the camera's), sampled at the substep times and recordable bit-exactly;
- :mod:`.names`: HumanBodyBones / VRM names, expression names, the Unity frame;
  :mod:`.osc`: packing and bounded parsing (python-osc); :mod:`.pose_kernel`: the compiled
  normalized pose.
"""

from .input import VmcInput, VmcInputOptions
from .receiver import ASSISTANT_PORT, DEFAULT_LISTEN_PORT, ReceiverStats, VmcReceiver, parse_listen
from .sender import DEFAULT_PORT, VmcSender, parse_target

__all__ = ["ASSISTANT_PORT", "DEFAULT_LISTEN_PORT", "DEFAULT_PORT", "ReceiverStats", "VmcInput", "VmcInputOptions",
           "VmcReceiver", "VmcSender", "parse_listen", "parse_target"]
