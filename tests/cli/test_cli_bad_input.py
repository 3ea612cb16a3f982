"""Every subcommand with bad arguments: one line on stderr naming the parameter, exit status 2,
no traceback, and nothing written.  Output cut short by its reader ends quietly."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from sims.cli.main import main
from sims.watermarks import registry

ROOT = pathlib.Path(__file__).resolve().parents[2]
HUGE = ["--n", "100000", "--T", "100000"]


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("gen") / "g.npz"
    assert main(["generate", "--lm", "tiny", "--algo", "srl", "--n", "3", "--T", "12", "--out", str(path), "--quiet"]) == 0
    return path


def bad_cases(texts: pathlib.Path, tmp: pathlib.Path) -> list[tuple[list[str], str]]:
    """(arguments, a phrase the error line must hold)."""
    missing = str(tmp / "no-such-folder" / "x.npz")
    text_file = tmp / "plain.txt"
    text_file.write_text("not an archive\n")
    return [
        (["generate", "--lm", "news", *HUGE, "--out", str(tmp / "a.npz")], "GiB of memory"),
        (["generate", "--lm", "news", "--out", missing], "--out must be in an existing folder"),
        (["generate", "--lm", "news", "--out", str(tmp)], "--out must be a file to write, not a folder"),
        (["generate", "--lm", "gpt5", "--out", str(tmp / "a.npz")], "got 'gpt5'"),
        (["generate", "--lm", "news", "--n", "0", "--out", str(tmp / "a.npz")], "--n must be an integer in [1, inf); got '0'"),
        (["generate", "--algo", "nope", "--out", str(tmp / "a.npz")], "argument --algo: invalid choice: 'nope'"),
        (["generate", "--threads", "0", "--out", str(tmp / "a.npz")], "--threads must be an integer in [1, "),
        (["generate", "--threads", "many", "--out", str(tmp / "a.npz")], "--threads must be an integer in [1, "),
        (["generate", "--algo", "srl", "--Delta", "0.3", "--out", str(tmp / "a.npz")], "Delta is a parameter of ('dualga', 'autocov')"),
        (["evaluate", "--algo", "dualga", "--delta", "3"], f"delta is a parameter of {registry.taking('delta')}"),
        (["evaluate", "--algo", "srl", "--gamma", "2"], "gamma must be in (0, 1); got 2.0"),
        (["evaluate", "--lm", "news", *HUGE], "GiB of memory"),
        (["evaluate", "--lm", "news", "--T", "-3"], "--T must be an integer in [1, inf); got '-3'"),
        (["detect", str(text_file), "--key", "1"], "is not a wmstats generation file"),
        (["detect", str(tmp / "missing.npz"), "--key", "1"], "missing.npz: no such file"),
        (["detect", str(texts), "--key", "1", "--html", str(tmp / "no-such-folder" / "r.html")], "--html must be in an existing folder"),
        (["detect", str(texts), "--key", "-1"], "key must be an integer in [0, 2**64)"),
        (["show", str(texts), "--index", "7"], "--index must be in [0, 2]"),
        (["show", str(texts), "--jsonl", str(tmp / "no-such-folder" / "t.jsonl")], "--jsonl must be in an existing folder"),
        (["show", str(text_file)], "is not a wmstats generation file"),
        (["attack", str(texts), "--kind", "deletion", "--rate", "0.1", "--out", missing], "--out must be in an existing folder"),
        (["sweep", str(tmp / "grid.toml"), "--out", str(tmp / "sw")], "grid must be an existing TOML file"),
        (["fit-lm", "--lm", "random-llama", "--out", str(tmp / "fit")], "--out must end in .npz"),
        (["reduced", "--G", "nope"], "G spec must be one of"),
        (["plan", "--algo", "dualga", "--Delta", "2"], "Delta must be in (0, 1); got 2.0"),
    ]


def test_every_subcommand_refuses_bad_input_in_one_line(texts, tmp_path, capsys):
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv, phrase in bad_cases(texts, tmp_path):
        capsys.readouterr()
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's own errors
            rc = exc.code
        err = capsys.readouterr().err
        assert rc == 2, (argv, err)
        assert err.count("\n") == 1 and phrase in err, (argv, err)
        assert "Traceback" not in err and "allow_pickle" not in err, (argv, err)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted({*before, "plain.txt"}), "a refused command wrote a file"


@pytest.mark.parametrize("module, argv, phrase", [
    ("paper_figs", ["--lm", "gpt5"], "argument --lm: lm must be"),
    ("paper_figs", ["--out", "/proc/no/such"], "--out must be a folder that can be created"),
    ("paper_figs.demo", ["--out", "/proc/no/such"], "--out must be a folder that can be created"),
    ("bench", ["--out", "/proc/no/such"], "--out must be a folder that can be created"),
])
def test_the_other_entry_points_refuse_bad_input_in_one_line(module, argv, phrase, capsys):
    main_of = __import__(f"{module}.__main__" if module != "paper_figs.demo" else module, fromlist=["main"]).main
    try:
        rc = main_of(argv)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and phrase in err, err


def test_the_file_written_is_the_file_reported(tmp_path, capsys):
    out = tmp_path / "noext"
    assert main(["generate", "--lm", "tiny", "--n", "2", "--T", "5", "--out", str(out), "--quiet"]) == 0
    assert f'"out": "{out}"' in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["noext"]
    assert main(["show", str(out), "--quiet"]) == 0


def test_output_cut_short_by_its_reader_ends_quietly(tmp_path):
    """``sims show ... | head -c 50`` on more text than a pipe holds (64 KiB): no BrokenPipeError
    traceback, exit status 0."""
    big = tmp_path / "big.npz"
    assert main(["generate", "--lm", "tiny", "--n", "400", "--T", "40", "--out", str(big), "--quiet"]) == 0
    cmd = f"{sys.executable} -m sims show {big} --quiet | head -c 50"
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, cwd=ROOT)
    assert len(p.stdout) == 50
    assert p.returncode == 0 and p.stderr == "", p.stderr
