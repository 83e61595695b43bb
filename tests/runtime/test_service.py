"""The local control service: every endpoint, traversal refused, malformed JSON, loopback only."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from runtime.service import ControlService


class FakeController:
    def __init__(self):
        self.calls = []

    def status(self):
        return {"fps": 30.0, "face_found": True, "substeps_per_frame": 4.0, "dropped_frames": 0}

    def recenter(self):
        self.calls.append("recenter")

    def load_avatar(self, path: Path):
        if path.name == "broken.vrm":
            from avatars import AvatarError

            raise AvatarError(path.name, "", "not a glTF file")      # what load_avatar raises
        self.calls.append(("avatar", path))
        return {"loaded": path.name}

    def set_hair(self, solver, params):
        self.calls.append(("hair", solver, params))
        return {"solver": solver or "rest-shape", "params": params}

    def frame_png(self):
        return b"\x89PNG\r\n\x1a\nfake"


@pytest.fixture()
def service(tmp_path):
    avatars = tmp_path / "avatars"
    avatars.mkdir()
    (avatars / "a.vrm").write_bytes(b"x")
    (avatars / "broken.vrm").write_bytes(b"x")
    (tmp_path / "secret.vrm").write_bytes(b"x")
    ctl = FakeController()
    with ControlService(ctl, port=0, avatar_dir=avatars) as svc:
        yield svc, ctl


def request(svc, method, path, body=None, raw=None):
    host, port = svc.address
    conn = http.client.HTTPConnection(host, port, timeout=5)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    payload = r.read()
    conn.close()
    ctype = r.getheader("Content-Type")
    return r.status, (json.loads(payload) if ctype == "application/json" else payload)


def test_bound_to_loopback_only(service):
    svc, _ = service
    assert svc.address[0] == "127.0.0.1"
    # not reachable on another local address of this machine (when it has one)
    other = [a for a in {i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
             if not a.startswith("127.")]
    for addr in other:
        with pytest.raises(OSError):
            socket.create_connection((addr, svc.address[1]), timeout=1).close()


def test_status(service):
    svc, _ = service
    status, body = request(svc, "GET", "/status")
    assert status == 200 and body["fps"] == 30.0 and body["face_found"] is True


def test_recenter(service):
    svc, ctl = service
    assert request(svc, "POST", "/recenter")[0] == 200
    assert ctl.calls == ["recenter"]


def test_avatar_inside_folder(service):
    svc, ctl = service
    status, body = request(svc, "POST", "/avatar", {"path": "a.vrm"})
    assert status == 200 and body == {"loaded": "a.vrm"}
    assert ctl.calls[0][1].name == "a.vrm"


@pytest.mark.parametrize("path", ["../secret.vrm", "/etc/passwd", "..%2Fsecret.vrm/../../secret.vrm",
                                  "sub/../../secret.vrm"])
def test_path_traversal_refused(service, path):
    svc, ctl = service
    status, body = request(svc, "POST", "/avatar", {"path": path})
    assert status in (400, 403, 404)
    assert "error" in body
    assert not ctl.calls


def test_traversal_is_403(service):
    svc, _ = service
    assert request(svc, "POST", "/avatar", {"path": "../secret.vrm"})[0] == 403


def test_avatar_missing_and_broken(service):
    svc, _ = service
    assert request(svc, "POST", "/avatar", {"path": "nope.vrm"})[0] == 404
    status, body = request(svc, "POST", "/avatar", {"path": "broken.vrm"})
    assert status == 422 and "not a glTF file" in body["error"]


def test_malformed_json_is_400(service):
    svc, _ = service
    for path in ("/avatar", "/hair", "/recenter"):
        status, body = request(svc, "POST", path, raw=b"{not json")
        assert status == 400 and "malformed JSON" in body["error"]
    status, body = request(svc, "POST", "/hair", raw=b"[1, 2]")
    assert status == 400


def test_hair(service):
    svc, ctl = service
    status, body = request(svc, "POST", "/hair", {"solver": "legacy", "params": {"k": 60}})
    assert status == 200 and body["solver"] == "legacy"
    assert request(svc, "POST", "/hair", {"solver": "magic"})[0] == 400
    assert request(svc, "POST", "/hair", {"params": ["k"]})[0] == 400
    status, body = request(svc, "POST", "/hair", {"solver": "vrm", "k": -1})   # k belongs in params
    assert status == 400 and body["error"] == "unknown key 'k' (known: solver, params)"
    assert request(svc, "POST", "/avatar", {"path": "a.vrm", "force": True})[0] == 400


def test_a_client_that_hangs_up_mid_body_is_no_error(service, capsys, monkeypatch):
    svc, _ = service
    from runtime.service import server as service_module

    def gone(self, method):
        raise BrokenPipeError(32, "Broken pipe")    # what writing to a closed client raises

    monkeypatch.setattr(service_module._Handler, "_route", gone)
    with socket.create_connection(svc.address) as s:
        s.sendall(b"POST /hair HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 2\r\n\r\n{}" % svc.address[1])
        s.settimeout(10)
        assert s.recv(100) == b""                   # no answer, connection closed
    monkeypatch.undo()
    assert request(svc, "GET", "/status")[0] == 200  # still serving
    assert "Traceback" not in capsys.readouterr().err


def test_frame_png(service):
    svc, _ = service
    status, body = request(svc, "GET", "/frame.png")
    assert status == 200 and body.startswith(b"\x89PNG")


def test_unknown_and_wrong_method(service):
    svc, _ = service
    assert request(svc, "GET", "/nope")[0] == 404
    assert request(svc, "GET", "/recenter")[0] == 405
    status, body = request(svc, "DELETE", "/status")
    assert status == 405 and "error" in body
    assert request(svc, "POST", "/avatar", {"path": "a\u0000.vrm"})[0] == 400


class StyleController(FakeController):
    """Hairstyles: "bad" cannot be fitted, "old" is superseded, "slow" does not finish in time."""

    def hairstyles(self):
        return {"styles": ["bob", "short"], "current": None, "pending": None, "switching": False, "error": None}

    def set_hairstyle(self, path, name, *, wait=True):
        from runtime.tryon import StyleError, StyleSuperseded

        self.calls.append(("hairstyle", path, name, wait))
        if name == "bad":
            raise StyleError("bad: the hair is too big for the head")
        if name == "old":
            raise StyleSuperseded("superseded by a newer request ('short')")
        if name == "slow":
            raise TimeoutError
        return {"current": name} if wait else {"pending": name, "switching": True}


@pytest.fixture()
def style_service(tmp_path):
    hair = tmp_path / "hair"
    for name in ("bob", "short", "bad", "old", "slow"):
        (hair / name).mkdir(parents=True)
        (hair / name / f"{name}.obj").write_text("v 0 0 0\n")
    (hair / "loose.glb").write_bytes(b"x")
    (hair / "notes.txt").write_text("x")
    (tmp_path / "outside.obj").write_text("v 0 0 0\n")
    (hair / "link").symlink_to(tmp_path)                      # a folder link out of the hair folder
    ctl = StyleController()
    with ControlService(ctl, port=0, hair_dirs=[hair]) as svc:
        yield svc, ctl, hair


def test_hairstyles_and_a_style_switch(style_service):
    svc, ctl, hair = style_service
    status, body = request(svc, "GET", "/hairstyles")
    assert status == 200 and body["styles"] == ["bob", "short"]
    status, body = request(svc, "POST", "/hairstyle", {"name": "bob"})
    assert status == 200 and body == {"current": "bob"}
    assert ctl.calls[-1] == ("hairstyle", hair / "bob" / "bob.obj", "bob", True)
    status, body = request(svc, "POST", "/hairstyle", {"name": "short/short.obj", "wait": False})
    assert status == 202 and body["pending"] == "short"
    status, body = request(svc, "POST", "/hairstyle", {"name": "loose.glb"})        # a file in the folder itself
    assert status == 200 and ctl.calls[-1][1:3] == (hair / "loose.glb", "loose")
    status, body = request(svc, "POST", "/hairstyle", {"name": None})               # the avatar's own hair
    assert status == 200 and ctl.calls[-1][1:3] == (None, None)


def test_hairstyle_errors(style_service):
    svc, ctl, _ = style_service
    n = len(ctl.calls)
    for name in ("../outside.obj", "/etc/passwd", "link/outside.obj", "..", "bob/../../outside.obj"):
        status, body = request(svc, "POST", "/hairstyle", {"name": name})
        assert status == 403, name
    assert request(svc, "POST", "/hairstyle", {"name": "nosuch"})[0] == 404
    assert request(svc, "POST", "/hairstyle", {"name": "nosuch.obj"})[0] == 404
    assert request(svc, "POST", "/hairstyle", {"name": "./notes.txt"})[0] == 400
    assert request(svc, "POST", "/hairstyle", {"name": ""})[0] == 400
    assert request(svc, "POST", "/hairstyle", {"name": 3})[0] == 400
    assert request(svc, "POST", "/hairstyle", {})[0] == 400
    assert request(svc, "POST", "/hairstyle", {"name": "bob", "wait": "yes"})[0] == 400
    assert request(svc, "POST", "/hairstyle", {"name": "bob", "colour": "red"})[0] == 400
    assert len(ctl.calls) == n                                  # nothing reached the session
    status, body = request(svc, "POST", "/hairstyle", {"name": "bad"})
    assert status == 422 and body["error"] == "bad: the hair is too big for the head"
    assert request(svc, "POST", "/hairstyle", {"name": "old"})[0] == 409
    assert request(svc, "POST", "/hairstyle", {"name": "slow"})[0] == 504
    assert request(svc, "GET", "/hairstyle")[0] == 405


def test_no_hair_folder_is_403(service):
    svc, _ = service
    status, body = request(svc, "POST", "/hairstyle", {"name": "bob"})
    assert status == 403 and "--hair-dir" in body["error"]


def test_listed_avatars_are_the_ones_the_loader_accepts(tmp_path):
    """GET /avatars lists what POST /avatar takes: a symlink out of the folder is neither."""
    from runtime.service import AVATAR_SUFFIXES, RequestError, folder_files, resolve_avatar

    folder, outside = tmp_path / "avatars", tmp_path / "elsewhere"
    (folder / "sub").mkdir(parents=True)
    outside.mkdir()
    (folder / "a.vrm").write_bytes(b"x")
    (folder / "sub" / "b.glb").write_bytes(b"x")
    (folder / "notes.txt").write_text("x")
    (outside / "c.vrm").write_bytes(b"x")
    (folder / "inside_link.vrm").symlink_to(folder / "a.vrm")
    (folder / "outside_link.vrm").symlink_to(outside / "c.vrm")
    (folder / "linked_dir").symlink_to(outside, target_is_directory=True)
    (folder / "named.bin").symlink_to(folder / "a.vrm")          # the loader checks the target's suffix
    (folder / "text.vrm").symlink_to(folder / "notes.txt")
    listed = folder_files(folder, AVATAR_SUFFIXES)
    assert listed == ["a.vrm", "inside_link.vrm", "named.bin", "sub/b.glb"]
    for name in listed:
        assert resolve_avatar(folder, name).is_file()
    for name, status in (("outside_link.vrm", 403), ("linked_dir/c.vrm", 403), ("text.vrm", 400)):
        with pytest.raises(RequestError) as err:
            resolve_avatar(folder, name)
        assert err.value.status == status
    assert folder_files(None, AVATAR_SUFFIXES) == []
