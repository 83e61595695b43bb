"""Bad VMC packets are counted and their logging is rate-limited (issue 34 finding 7): 2,000
packets with an OSC type tag nobody defines ('Z') used to log one WARNING each (python-osc's
"Unhandled parameter type: Z", on the root logger, without -v); now they are dropped as
malformed, logged once (then at most one line per 10 s), and the counts are in the run's
``GET /status``, its ``--json`` summary and the HUD."""

from __future__ import annotations

import logging
import socket
import threading
import time

from runtime.config import RunConfig
from runtime.session import Session
from runtime.vmc import VmcReceiver
from runtime.vmc.receiver import DropLog

from .oscdecode import bundle, message

BAD = message("/VMC/Ext/Blend/Val", ",sZ", "Joy")          # an unknown type tag
GOOD = bundle(message("/VMC/Ext/Bone/Pos", ",sfffffff", "Head", 0, 0, 0, 0, 0.1, 0, 0.995),
              message("/VMC/Ext/Blend/Apply", ","))


def test_two_thousand_unknown_type_tags_are_counted_and_logged_once(caplog):
    rx = VmcReceiver("127.0.0.1", 0)
    with caplog.at_level(logging.DEBUG):
        for _ in range(2000):
            assert rx.handle(BAD) is False
    rx.close()
    assert rx.stats.malformed == 2000 and rx.stats.dropped == 2000
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in lines if "Unhandled parameter" in r.getMessage()]
    assert len(lines) == 1 and "malformed 1" in lines[0].getMessage() and lines[0].name == "runtime.vmc.receiver"


def test_the_drop_log_says_the_counts_since_its_last_line(caplog):
    now = [0.0]
    rx = VmcReceiver("127.0.0.1", 0)
    rx.drop_log = DropLog(rx.stats, interval_s=10.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="runtime.vmc.receiver"):
        for k in range(300):
            now[0] = k * 0.1                                    # 30 s of one bad packet per 0.1 s
            rx.handle(BAD if k % 2 else b"garbage")
    rx.close()
    msgs = [r.getMessage() for r in caplog.records]
    assert 3 <= len(msgs) <= 4, msgs
    assert "300 dropped in all" not in msgs[0] and "dropped 1 " in msgs[0]


def test_counts_are_in_status_summary_and_hud(tmp_path):
    port = _free_udp_port()
    cfg = RunConfig(vmc_listen=f"127.0.0.1:{port}", duration=1.5, fps=10, size=(160, 90),
                    output=(f"png:{tmp_path}/png",), hud=True)
    stop = threading.Event()
    sent = {"bad": 0, "good": 0}

    def send():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        while not stop.is_set() and sent["bad"] < 400:
            for _ in range(20):
                s.sendto(BAD, ("127.0.0.1", port))
                sent["bad"] += 1
            s.sendto(GOOD, ("127.0.0.1", port))
            sent["good"] += 1
            time.sleep(0.01)
        s.close()

    seen = {}

    def on_frame(info, rig):
        if len(seen) == 0 and sent["bad"] >= 400:
            time.sleep(0.1)
            seen["status"] = session.controller.status()["vmc"]
            seen["hud"] = dict(session.drawer._hud_info(info, rig).extra)

    th = threading.Thread(target=send)
    with Session(cfg, say=lambda s: None, on_frame=on_frame) as session:
        th.start()
        result = session.run()
    stop.set()
    th.join()
    vmc = result.summary["vmc"]
    assert vmc["malformed"] > 300 and vmc["states"] > 10 and vmc["dropped"] == vmc["malformed"]
    assert seen["status"]["malformed"] > 300
    assert "dropped" in seen["hud"]["vmc"]


def _free_udp_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
