"""Operator CLI for users and API keys: ``python -m medgraph.auth <command> [options]``.

Input: a command and the config (``--config``, ``--set``) that names the app's SQLite file
(``app.path``) and the pepper's environment variable (``auth.pepper_env``). Output: one line per
result, or one JSON document with ``--json``. A key's plaintext is printed once, by ``issue-key``
(and ``new-key``, which stores nothing: for ``auth.admin_key_env``).

    python -m medgraph.auth create-user alice [--role admin]
    python -m medgraph.auth issue-key alice
    python -m medgraph.auth revoke 3f2a9c0d1b4e
    python -m medgraph.auth disable-user alice | enable-user alice
    python -m medgraph.auth list [--user alice]
    python -m medgraph.auth usage [--user alice]
    python -m medgraph.auth new-key
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from medgraph.auth.keys import ROLES, ApiKeyStore, new_key
from medgraph.auth.quota import QuotaTracker
from medgraph.config import ConfigError, MedGraphConfig, load_config


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m medgraph.auth", description="users and API keys")
    parser.add_argument("--config", default="configs/local.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="A.B=C", help="config override")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-user", help="add a user")
    create.add_argument("user_id")
    create.add_argument("--role", choices=ROLES, default="user")
    commands.add_parser("issue-key", help="a new key for a user (printed once)").add_argument("user_id")
    commands.add_parser("revoke", help="revoke a key by its key ID").add_argument("key_id")
    commands.add_parser("disable-user", help="a disabled user's keys stop working").add_argument("user_id")
    commands.add_parser("enable-user", help="undo disable-user").add_argument("user_id")
    listing = commands.add_parser("list", help="users and keys (never secrets)")
    listing.add_argument("--user", default=None)
    usage = commands.add_parser("usage", help="today's quota counts")
    usage.add_argument("--user", default=None)
    commands.add_parser("new-key", help="print a fresh key for auth.admin_key_env (stores nothing)")
    return parser


def run(args: argparse.Namespace, cfg: MedGraphConfig) -> dict[str, Any]:
    """Execute one command; the result as a dict (``ok`` False for a refused command)."""
    if args.command == "new-key":
        return {"ok": True, "key": new_key()}
    if args.command == "usage":
        quota = QuotaTracker(cfg.app.path, cfg.auth.per_user_daily, cfg.auth.global_daily)
        return {"ok": True, **quota.usage(args.user)}
    keys = ApiKeyStore(cfg.app.path, os.environ.get(cfg.auth.pepper_env) or None)
    if args.command == "create-user":
        keys.create_user(args.user_id, args.role)
        return {"ok": True, "user_id": args.user_id, "role": args.role}
    if args.command == "issue-key":
        key_id, key = keys.issue_key(args.user_id)
        return {"ok": True, "user_id": args.user_id, "key_id": key_id, "key": key}
    if args.command == "revoke":
        return {"ok": keys.revoke(args.key_id), "key_id": args.key_id}
    if args.command in ("disable-user", "enable-user"):
        done = keys.set_disabled(args.user_id, args.command == "disable-user")
        return {"ok": done, "user_id": args.user_id}
    return {"ok": True, "users": keys.list_users(), "keys": keys.list_keys(args.user)}


def _text(result: dict[str, Any]) -> str:
    if "users" in result:
        lines = [
            f"user {u['user_id']} role={u['role']} disabled={u['disabled']} active_keys={u['active_keys']}"
            for u in result["users"]
        ]
        lines += [f"key {k['key_id']} user={k['user_id']} revoked={k['revoked_at'] is not None}"
                  for k in result["keys"]]
        return "\n".join(lines)
    if "key" in result:
        return f"{result['key']}\n(shown once: store it now)"
    return " ".join(f"{k}={v}" for k, v in result.items())


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cfg = load_config(args.config, args.set)
        result = run(args, cfg)
    except (ConfigError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    sys.stdout.write((json.dumps(result, indent=2) if args.json else _text(result)) + "\n")
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
