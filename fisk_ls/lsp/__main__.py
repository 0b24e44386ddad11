"""`fisk-ls`: run the language server (stdio by default)."""

from __future__ import annotations

import argparse
from pathlib import Path


def serve(
    tcp: str | None = None, log_file: Path | None = None, token_env: str | None = None
) -> None:
    from .wiring import run

    run(tcp=tcp, log_file=log_file, token_env=token_env)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="fisk-ls", description=__doc__)
    parser.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on loopback TCP instead of stdio"
    )
    parser.add_argument(
        "--token-env",
        metavar="NAME",
        help="with --tcp: the environment variable holding the token clients must send",
    )
    parser.add_argument("--log-file", type=Path, help="write logs to this file")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(f"fisk-ls {version('fisk-ls')}")
        return
    serve(tcp=args.tcp, log_file=args.log_file, token_env=args.token_env)


if __name__ == "__main__":
    main()
