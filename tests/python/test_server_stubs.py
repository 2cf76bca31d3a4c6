"""The rknn_server messages are generated from the daemon's .proto into a cache: once, again
when the cached module is damaged, into a private directory when the cache cannot be written,
and a missing .proto or protoc is named."""

from __future__ import annotations

import pytest

from openrknn.runtime import server_stubs

pytest.importorskip("grpc_tools")


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """load_messages as in a new process, with the cache in tmp_path/cache."""
    monkeypatch.setattr(server_stubs, "_loaded", None)
    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENRKNN_SERVER_PROTO", raising=False)
    return tmp_path / "cache" / "server-stubs"


def test_generated_once_into_the_cache(fresh, monkeypatch):
    messages = server_stubs.load_messages()
    assert messages.RunRequest(want_float=True).want_float
    cached = list(fresh.glob("rknn_server_pb2_*.py"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    monkeypatch.setattr(server_stubs, "_loaded", None)
    monkeypatch.setattr(server_stubs, "_generate", lambda *_: pytest.fail("generated again"))
    assert server_stubs.load_messages().Tensor is not None
    assert cached[0].stat().st_mtime_ns == stamp


def test_damaged_cache_entry_is_regenerated(fresh, monkeypatch):
    server_stubs.load_messages()
    cached = next(fresh.glob("rknn_server_pb2_*.py"))
    cached.write_text(cached.read_text()[:100])  # cut short, as by a full disk
    monkeypatch.setattr(server_stubs, "_loaded", None)
    assert server_stubs.load_messages().EvalPerfRequest(loops=3).loops == 3
    assert "EvalPerfRequest" in cached.read_text()


def test_unwritable_cache_falls_back_to_a_private_directory(fresh, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(blocker / "cache"))
    assert server_stubs.load_messages().SessionEvent(session_id=7).session_id == 7


def test_missing_proto_is_named(fresh, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENRKNN_SERVER_PROTO", str(tmp_path / "gone.proto"))
    with pytest.raises(server_stubs.StubError, match="OPENRKNN_SERVER_PROTO is '.*gone.proto', "
                                                     "which is not a file"):
        server_stubs.load_messages()


def test_proto_that_does_not_compile_is_reported(fresh, monkeypatch, tmp_path):
    broken = tmp_path / "rknn_server.proto"
    broken.write_text('syntax = "proto3";\nmessage Broken { int32 = 1; }\n')
    monkeypatch.setenv("OPENRKNN_SERVER_PROTO", str(broken))
    with pytest.raises(server_stubs.StubError, match="protoc could not compile rknn_server.proto"):
        server_stubs.load_messages()
