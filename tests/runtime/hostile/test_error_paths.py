"""Issue 34 item 9 (found not holding while checking item 10): error answers showed absolute
server paths to web clients. Every error answer now names files by their last component;
URLs, relative names and ratios are left alone."""

from __future__ import annotations

import pytest

from runtime.service.server import client_message


@pytest.mark.parametrize("text, shown", [
    ("/srv/me/avatars/zero.vrm: spring 'hair': joint node 19 has no rest frame",
     "zero.vrm: spring 'hair': joint node 19 has no rest frame"),
    ("no hair style named 'q' in /work/shared/assets/hair (styles: a, b)", "no hair style named 'q' in hair (styles: a, b)"),
    ("clip 'x' (/home/u/clips/walk.bvh)", "clip 'x' (walk.bvh)"),
    ("see https://vrm.dev/en/vrm1/", "see https://vrm.dev/en/vrm1/"),
    ("ratio 1/2 of a/b.vrm", "ratio 1/2 of a/b.vrm"),
    ("~/avatars/me.vrm", "~/avatars/me.vrm"),
])
def test_absolute_paths_are_shortened_in_answers(text, shown):
    assert client_message(text) == shown


def test_an_avatar_that_cannot_be_loaded_is_answered_with_its_file_name_only(service, tmp_path, monkeypatch):
    from avatars import AvatarError

    from .conftest import call

    s, ctl = service
    (tmp_path / "avatars" / "zero.vrm").write_bytes(b"glTF")

    def refuse(path):
        raise AvatarError(str(path), "", "spring 'hair': joint node 19 has no rest frame")

    monkeypatch.setattr(ctl, "load_avatar", refuse)
    status, body, _ = call(s.address[1], "POST", "/avatar", {"path": "zero.vrm"})
    assert status == 422 and body["error"] == "zero.vrm: spring 'hair': joint node 19 has no rest frame"
    assert str(tmp_path) not in body["error"]
