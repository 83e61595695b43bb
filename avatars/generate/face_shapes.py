"""The numbers of the face's expression shapes (:mod:`avatars.generate.face`): the mouth of
each viseme and emotion, and the lids and brows of the emotions.

Face coordinates in metres (x: the avatar's left, y: up); "inner" is the end of an eye or
brow toward the nose, "outer" toward the ear. Happy's eyes and brows are drawn by
:mod:`avatars.generate.face` itself (eyes closed in upward arcs), the others from these
tables. The shapes read as their emotion at weight 1 in docs/img/default-expressions.png
(tests/avatars/test_generate.py checks the directions: corners up for happy and relaxed,
down for angry and sad, inner brow ends down for angry and up for sad, ...).
"""

#: the VRM 1.0 preset emotions, each a morph target of the face
EMOTIONS = ("happy", "angry", "sad", "relaxed", "surprised")

#: mouth shapes: (half width, upper-lip rise, lower-lip drop, corner lift), metres
MOUTH = {
    "rest": (0.0115, 0.0007, 0.0011, 0.0014),
    "aa": (0.0120, 0.0020, 0.0170, 0.0000),
    "ih": (0.0160, 0.0012, 0.0050, 0.0020),
    "ou": (0.0070, 0.0040, 0.0080, 0.0000),
    "ee": (0.0150, 0.0018, 0.0085, 0.0010),
    "oh": (0.0095, 0.0040, 0.0130, 0.0000),
    "happy": (0.0140, 0.0004, 0.0085, 0.0042),
    "angry": (0.0105, 0.0008, 0.0030, -0.0034),     # a frown, a little open
    "sad": (0.0095, 0.0004, 0.0012, -0.0032),       # a thin frown
    "relaxed": (0.0125, 0.0003, 0.0008, 0.0040),    # a closed smile
    "surprised": (0.0078, 0.0062, 0.0125, 0.0000),  # an open round mouth
}

#: eyelids of the emotions but happy: (upper lid at the inner corner, at the outer corner,
#: lower lid, widen): the first three the fraction of the way to the blink's closed curve
#: (negative: away from it); widen: the upper lid raised by this fraction of its height above
#: the eye's centre line, the lower lid lowered by half that fraction of its depth
LIDS = {
    "angry": (0.50, 0.22, 0.25, 0.0),
    "sad": (-0.06, 0.45, 0.0, 0.0),
    "relaxed": (0.32, 0.32, 0.40, 0.0),
    "surprised": (0.0, 0.0, 0.0, 0.22),
}

#: brows of the emotions but happy: (rise at the inner end, at the outer end, of the middle
#: over the ends, shift of the inner end toward the nose), metres
BROWS = {
    "angry": (-0.0038, 0.0010, 0.0, 0.0015),
    "sad": (0.0052, -0.0018, 0.0, 0.0),
    "relaxed": (0.0014, 0.0, 0.0006, 0.0),
    "surprised": (0.0048, 0.0036, 0.0018, 0.0),
}
