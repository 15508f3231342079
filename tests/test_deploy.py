"""The container setup: the app needs a key (made on first start, printed once), Qdrant has
an API key and is not published. No Docker engine here, so the files are read and the
first-start behaviour runs as a real `stream-rag serve` process."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest
import yaml  # type: ignore[import-untyped]  # no stubs installed; only safe_load is used

from .helpers import HTTP_GUARD_S, free_port

ROOT = Path(__file__).resolve().parent.parent


def test_compose_keeps_qdrant_private_and_keyed() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    qdrant, app = compose["services"]["qdrant"], compose["services"]["app"]
    assert "ports" not in qdrant
    assert re.fullmatch(
        r"\$\{QDRANT_API_KEY:\?.+\}", qdrant["environment"]["QDRANT__SERVICE__API_KEY"]
    )
    assert app["environment"]["STREAM_RAG_QDRANT_API_KEY"].startswith("${QDRANT_API_KEY:?")
    assert compose["networks"][qdrant["networks"][0]]["internal"] is True
    for published in app["ports"]:
        assert str(published).startswith("127.0.0.1:"), published
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert '"--init-key"' in dockerfile
    assert re.search(r"^USER (?!root)", dockerfile, re.M)


def test_the_image_is_for_production() -> None:
    # Production answers from the operator's documents: no sample unless the demo is asked for.
    dockerfile = (ROOT / "Dockerfile").read_text()
    (cmd,) = re.findall(r"^CMD (.+)$", dockerfile, re.M)
    assert "--sample" not in cmd
    installs = re.findall(r"pip install [^&\n]*", dockerfile)
    assert installs
    for install in installs:  # regular installs of the locked versions, not an editable one
        assert " -e " not in install, install
        assert "--editable" not in install, install
        assert "-c constraints.txt" in install, install
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("app", "qdrant"):
        assert services[name]["restart"] == "unless-stopped", name
        assert "profiles" not in services[name], name
    assert "--sample" not in str(services["app"].get("command", ""))
    assert "readyz" in " ".join(services["app"]["healthcheck"]["test"])
    demo = services["demo"]
    assert demo["profiles"] == ["demo"]
    assert "--sample" in demo["command"]
    assert demo["volumes"] != services["app"]["volumes"]  # the sample never meets real data
    assert "STREAM_RAG_QDRANT_URL" not in demo["environment"]


def test_qdrant_is_pinned_to_the_clients_minor_version() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    image = compose["services"]["qdrant"]["image"]
    pinned = re.fullmatch(r"qdrant/qdrant:v(\d+)\.(\d+)\.\d+", image)
    assert pinned, image
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (bound,) = [dep for dep in project["dependencies"] if dep.startswith("qdrant-client")]
    lower = re.search(r">=(\d+)\.(\d+)", bound)
    assert lower, bound
    assert pinned.groups() == lower.groups(), (image, bound)
    locked = re.search(
        r"^qdrant-client==(\d+)\.(\d+)\.", (ROOT / "constraints.txt").read_text(), re.M
    )
    assert locked
    assert pinned.groups() == locked.groups(), image


def docker_ignored(path: str, rules: list[str]) -> bool:
    """Whether the build context leaves `path` out: Docker's rules, the last match wins."""
    ignored = False
    for rule in rules:
        keep = rule.startswith("!")
        pattern = rule.removeprefix("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        hit = any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes)
        if pattern.startswith("**/"):
            hit = hit or any(fnmatch.fnmatchcase(part, pattern[3:]) for part in parts)
        if hit:
            ignored = not keep
    return ignored


def test_the_build_context_is_an_allowlist() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    rules = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert rules[0] == "*"  # everything out, then what the image needs back in
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", (ROOT / "Dockerfile").read_text(), re.M)
    for source in " ".join(copied).split():
        assert not docker_ignored(source, rules), source
    assert not docker_ignored("stream_rag/http/static/widget.js", rules)
    for secret in (
        ".venv/bin/python",
        "stream_rag_data/keys.json",
        ".env",
        "report/latency.png",
        ".git/config",
        "stream_rag/__pycache__/config.cpython-311.pyc",
        "tests/test_deploy.py",
    ):
        assert docker_ignored(secret, rules), secret


def compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def assert_every_profile_configures(command: list[str], cwd: Path, env: dict[str, str]) -> None:
    """`config` of the compose file in `cwd` is valid with no profile, `demo` and `scale`."""
    for profile in ([], ["--profile", "demo"], ["--profile", "scale"]):
        done = subprocess.run(
            [*command, *profile, "config", "--quiet"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr


def test_docker_compose_config_validates() -> None:
    command = compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    env = {**os.environ, "QDRANT_API_KEY": "0" * 64, "POSTGRES_PASSWORD": "1" * 64}
    assert_every_profile_configures(command, ROOT, env)


def test_first_start_creates_one_admin_key_and_requires_it(tmp_path: Path) -> None:
    env = {**os.environ, "STREAM_RAG_DATA_DIR": str(tmp_path / "data")}
    port = free_port()
    command = [sys.executable, "-m", "stream_rag.cli", "serve", "--init-key", "--port", str(port)]
    log = tmp_path / "stderr.log"
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, stderr=sink, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while "serving on" not in log.read_text():
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        printed = re.findall(r"^\s+(sr_\S+)$", log.read_text(), re.M)
        assert len(printed) == 1, log.read_text()
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                status = httpx.get(f"{base}/v1/documents", timeout=HTTP_GUARD_S).status_code
                break
            except httpx.TransportError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        assert status == 401
        auth = {"Authorization": f"Bearer {printed[0]}"}
        assert (
            httpx.get(f"{base}/v1/documents", headers=auth, timeout=HTTP_GUARD_S).status_code == 200
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Exactly one key was made, and only its hash is stored.
    again = subprocess.run(
        [sys.executable, "-m", "stream_rag.cli", "keys", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.count('"id"') == 1
    assert printed[0].encode() not in (tmp_path / "data" / "stream_rag.sqlite3").read_bytes()


def test_the_scale_profile_shares_one_database_and_index_behind_an_sse_proxy() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    scale = {name for name, s in services.items() if s.get("profiles") == ["scale"]}
    assert scale == {"postgres", "app-a", "app-b", "worker", "proxy"}
    assert re.fullmatch(r"postgres:\d+\.\d+(-alpine)?", services["postgres"]["image"])
    assert re.fullmatch(r"nginx:\d+\.\d+\.\d+(-alpine)?", services["proxy"]["image"])
    for name in ("app-a", "app-b", "worker"):
        env = services[name]["environment"]
        assert env["STREAM_RAG_DATABASE_URL"].startswith("postgresql://"), name
        assert env["STREAM_RAG_QDRANT_URL"] == "http://qdrant:6333", name
        assert env["STREAM_RAG_INDEX_IN_PROCESS"] == "false", name
    assert services["worker"]["command"] == ["stream-rag", "worker"]
    conf = (ROOT / "deploy" / "nginx-scale.conf").read_text()
    for directive in (
        "proxy_buffering off",
        "proxy_read_timeout 3600s",
        "app-a:8000",
        "app-b:8000",
    ):
        assert directive in conf, directive
    mount = services["proxy"]["volumes"][0]
    assert mount.startswith("./deploy/nginx-scale.conf:")


def test_the_docker_guides_env_is_enough_for_every_profile(tmp_path: Path) -> None:
    # The guide's first commands write `.env`; compose checks every service's variables (the
    # scale profile's PostgreSQL password too), so what the guide writes must satisfy them all.
    command = compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    guide = (ROOT / "docs" / "guides" / "docker.md").read_text()
    first = guide.split("```sh\n", 1)[1].split("```", 1)[0]
    writes = [line for line in first.splitlines() if line.startswith("echo ") and ".env" in line]
    assert writes, "the guide's first block writes no .env"
    (tmp_path / "docker-compose.yml").write_bytes((ROOT / "docker-compose.yml").read_bytes())
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    subprocess.run(["bash", "-c", "\n".join(writes)], cwd=tmp_path, env=env, check=True)
    assert_every_profile_configures(command, tmp_path, env)
