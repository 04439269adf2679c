"""Tokens never reach the disk: a mirror file that links to ``/proc/self/environ`` or a ``.env`` file is refused
before it is read, and a mirror file that *is* a ``.env`` file is refused quoting none of its values.

Every token variable of the source registry (``gridshift.sources.TOKEN_ENV_VARS``: ENTSOE_API_KEY,
ELECTRICITYMAPS_TOKEN, PJM_API_KEY) is planted in the environment of a real ``gridshift ingest`` process, and
in the ``.env`` file; after the hostile cases every file under the home — the Dagster run databases, the
failure logs, the warehouse — is scanned for each value.
"""

from __future__ import annotations

import os
import subprocess
import sys

from gridshift.sources import TOKEN_ENV_VARS

#: a distinct value per token variable, as long as real ones
TOKENS = {name: f"tok{i}-{name.lower()}-7f3a9c2e41b8d605e9a1" for i, name in enumerate(TOKEN_ENV_VARS)}
CARBON, WEATHER = "electricitymaps/{r}/{r}_2023_hourly.csv", "open-meteo/{r}/2023.json"
PRICE = "prices/standardized/{r}/{r}_electricity_prices_2023.csv"


def _ingest(mirror, home, regions: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, **TOKENS}
    env.pop("GRIDSHIFT_MIRROR", None)
    if mirror is not None:
        env["GRIDSHIFT_MIRROR"] = str(mirror)
    return subprocess.run([sys.executable, "-m", "gridshift_cli", "ingest", "--regions", regions, "--year", "2023",
                           "--sources", "carbon,price,weather", "--home", str(home)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_hostile_mirror_files_are_refused_and_no_token_reaches_the_home(tmp_path, shared_data):
    assert set(TOKENS) >= {"ENTSOE_API_KEY", "ELECTRICITYMAPS_TOKEN"}
    dotenv = tmp_path / ".env"
    dotenv.write_text("".join(f"{k}={v}\n" for k, v in TOKENS.items()))
    mirror, home = tmp_path / "mirror", tmp_path / "home"
    planted = {
        CARBON.format(r="DE-LU"): "/proc/self/environ",  # a link to the process's environment
        PRICE.format(r="DE-LU"): str(dotenv),  # a link to the .env file
        WEATHER.format(r="DE-LU"): None,  # a copy of the .env file, inside the mirror
        CARBON.format(r="GB"): None,
        WEATHER.format(r="GB"): str(shared_data / WEATHER.format(r="DE-LU")),  # a real file of another path
    }
    for rel, target in planted.items():
        path = mirror / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if target is None:
            path.write_bytes(dotenv.read_bytes())
        else:
            path.symlink_to(target)
    done = _ingest(mirror, home, "DE-LU,GB", cwd=tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said  # every partition refused
    assert said.count("FAILED:") == 6 and said.count("links outside the mirror") == 3, said
    assert "/environ (a mirror file" in said and f"{dotenv} (a mirror file" in said
    # the home's configuration is a link to the .env file: refused (not JSON) with a failure log under the home
    home_config = home / "gridshift.json"
    home_config.symlink_to(dotenv)
    bad_config = _ingest(None, home, "DE-LU", cwd=tmp_path)
    assert bad_config.returncode == 2 and "gridshift.json: not valid JSON" in bad_config.stderr, bad_config.stderr
    said += bad_config.stdout + bad_config.stderr
    files = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]  # (the planted link is ours)
    assert any(p.parts[-2] == "runs" for p in files) and any(p.parent.name == "logs" for p in files)
    leaks = [f"{p}: {k}" for p in files for k, v in TOKENS.items() if v.encode() in p.read_bytes()]
    leaks += [f"output: {k}" for k, v in TOKENS.items() if v in said]
    assert leaks == []
    assert not any((home / "raw").rglob("*"))  # nothing landed
