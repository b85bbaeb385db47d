"""Arguments several commands share."""


def keep_secrets(parser):
    """--keep-secrets, on every command that writes or prints trace content (model/secrets.py)."""
    parser.add_argument(
        "--keep-secrets",
        action="store_true",
        help="keep tokens, passwords and keys (in metadata, names and args) as they are (redacted by default)",
    )
