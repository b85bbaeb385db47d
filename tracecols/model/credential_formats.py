"""Credential formats recognised anywhere in a string, whatever key they sit under.

The list follows the prefixes and structures published in gitleaks' default rule set
(config/gitleaks.toml, v8.30.0): every rule there whose credential has a documented prefix or a
fixed structure has an entry here, written for this project, plus formats gitleaks leaves to
generic rules (Google OAuth tokens and client secrets, a URL's password with or without a user).
The rules that gitleaks keys on a service's name near an assignment (`discord … = <32 hex>`) are
covered where the name also carries a secret word (key, token, secret, password, …: the key rule
of model/secrets.py), not otherwise; docs/schema.md lists what is knowingly not covered.

Each entry is (name, core, python): `core` is an expression that RE2 (pyarrow, DuckDB) and
Python's `re` read alike, and that every secret of the format matches; `python`, where given, is
the exact rule (lookarounds, which RE2 lacks); otherwise the exact rule is `core` standing alone:
not glued to a letter or digit on either side (`kern_sk-proj-…` is caught, `task-…` is not). The
whole match is the secret, except the groups `pre` and `post`, which stay.
"""

_ALNUM = "A-Za-z0-9"

# (name, core, python or None)
FORMATS: list[tuple[str, str, str | None]] = [
    (
        "PEM or PGP private key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY",
        r"(?P<pre>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)(?s:.)*?"
        r"(?:(?P<post>-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)|\Z)",
    ),
    ("JWT", r"eyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]*", None),
    ("JWT in base64", r"ZXlK[A-Za-z0-9+/]{40,}={0,2}", None),
    ("Grafana API key", r"eyJrIjoi[A-Za-z0-9]{70,}={0,3}", None),
    ("Hugging Face", r"hf_[A-Za-z0-9]{30,}", r"(?<![A-Za-z0-9])hf_(?![a-z]+\b)[A-Za-z0-9]{30,}(?![A-Za-z0-9])"),
    ("Hugging Face organisation", r"api_org_[A-Za-z]{34}", None),
    ("GitHub", r"gh[pousr]_[A-Za-z0-9]{30,}", r"(?<![A-Za-z0-9])gh[pousr]_(?![a-z]+\b)[A-Za-z0-9]{30,}(?![A-Za-z0-9])"),
    ("GitHub fine-grained", r"github_pat_\w{22,}", None),
    (
        "GitLab",
        r"gl(?:pat|dt|ft|rt|soat|ffct|cbt|imt|agent|oas|ptt)-[\w-]{20,}(?:\.[0-9a-z]{9})?",
        None,
    ),
    ("GitLab runner registration", r"GR1348941[\w-]{20}", None),
    ("GitLab session cookie", r"_gitlab_session=[0-9a-z]{32}", r"(?P<pre>_gitlab_session=)[0-9a-z]{32}(?![A-Za-z0-9])"),
    ("AWS access key id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", None),
    ("Amazon Bedrock", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}", None),
    ("Google API key", r"AIza[\w-]{35}", r"(?<![A-Za-z0-9])AIza[\w-]{35}(?![\w-])"),
    ("Google OAuth access token", r"ya29\.[\w-]{20,}", None),
    ("Google OAuth client secret", r"GOCSPX-[\w-]{28}", None),
    ("Google OAuth refresh token", r"1//0[\w-]{40,}", None),
    ("Slack configuration token", r"xoxe\.xox[bp]-[\w-]{20,}", None),
    ("Slack token", r"xox[abeoprs]-[A-Za-z0-9-]{10,}", None),
    ("Slack app token", r"xapp-\d-[A-Za-z0-9-]{10,}", None),
    (
        "Slack webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
        r"(?P<pre>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/]{20,}",
    ),
    (
        "Microsoft Teams webhook",
        r"\.webhook\.office\.com/webhookb2/[\w@/-]{40,}",
        r"(?P<pre>\.webhook\.office\.com/webhookb2/)[\w@/-]{40,}",
    ),
    ("OpenAI / Anthropic", r"sk-[\w-]{20,}", r"(?<![A-Za-z0-9])sk-(?=[\w-]*\d)[\w-]{20,}"),
    ("Stripe", r"[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}", None),
    ("Twilio", r"SK[0-9a-fA-F]{32}", None),
    ("npm", r"npm_[A-Za-z0-9]{36}", None),
    ("PyPI", r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}", None),
    ("RubyGems", r"rubygems_[a-f0-9]{48}", None),
    ("Clojars", r"(?i:CLOJARS_)[A-Za-z0-9]{60}", None),
    ("Databricks", r"dapi[a-f0-9]{32}(?:-\d)?", None),
    ("SendGrid", r"SG\.[\w-]{22}\.[\w-]{43}", None),
    ("Sendinblue", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", None),
    ("Mailgun", r"(?:pub)?key-[a-f0-9]{32}", None),
    ("Shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", None),
    ("DigitalOcean", r"do[opr]_v1_[a-f0-9]{64}", None),
    ("Doppler", r"dp\.pt\.[A-Za-z0-9]{43}", None),
    ("Dynatrace", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", None),
    ("Linear", r"lin_api_[A-Za-z0-9]{40}", None),
    ("Notion", r"ntn_[0-9]{11}[A-Za-z0-9]{35}", None),
    ("Postman", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", None),
    ("Prefect", r"pnu_[A-Za-z0-9]{36}", None),
    ("Pulumi", r"pul-[a-f0-9]{40}", None),
    ("Perplexity", r"pplx-[A-Za-z0-9]{48}", None),
    ("PlanetScale", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", None),
    ("ReadMe", r"rdme_[a-z0-9]{70}", None),
    ("Scalingo", r"tk-us-[\w-]{48}", None),
    ("Sentry user token", r"sntryu_[a-f0-9]{64}", None),
    ("Sentry organisation token", r"sntrys_eyJ[A-Za-z0-9+/=_]{50,}", None),
    ("SettleMint", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", None),
    ("Shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", None),
    ("Sourcegraph", r"sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}", None),
    ("Square", r"(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,60}", None),
    ("HashiCorp Vault", r"hv[sb]\.[\w-]{90,}", None),
    ("Terraform Cloud", r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}", None),
    ("Grafana cloud", r"glc_[A-Za-z0-9+/]{32,}={0,3}", None),
    ("Grafana service account", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", None),
    ("age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", None),
    (
        "1Password secret key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        None,
    ),
    ("1Password service account", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", None),
    ("Adobe client secret", r"p8e-[A-Za-z0-9]{32}", None),
    ("Alibaba access key id", r"LTAI[A-Za-z0-9]{20}", None),
    ("Artifactory", r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})", None),
    ("Azure AD client secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", None),
    ("ClickHouse Cloud", r"4b1d[A-Za-z0-9]{38}", None),
    ("Cloudflare origin CA", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", None),
    ("Duffel", r"duffel_(?:test|live)_[\w=-]{43}", None),
    ("EasyPost", r"EZ[AT]K[A-Za-z0-9]{54}", None),
    ("Facebook page token", r"EAA[MC][A-Za-z0-9]{100,}", None),
    ("Flutterwave", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?", None),
    ("Fly.io", r"(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", None),
    ("Frame.io", r"fio-u-[\w=-]{64}", None),
    ("Harness", r"(?:pat|sat)\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", None),
    ("Heroku", r"HRKU-AA[\w-]{58}", None),
    ("Infracost", r"ico-[A-Za-z0-9]{32}", None),
    ("42 intranet", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}", None),
    ("MaxMind", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", None),
    ("New Relic", r"NR(?:AK-[A-Za-z0-9]{27}|II-[A-Za-z0-9-]{32}|JS-[a-f0-9]{19})", None),
    ("Octopus Deploy", r"API-[A-Z0-9]{26}", None),
    ("OpenShift", r"sha256~[\w-]{43}", None),
    ("Typeform", r"tfp_[\w.=-]{59}", None),
    ("Mapbox", r"[ps]k\.eyJ[\w.-]{50,}", None),
    ("Telegram bot", r"[0-9]{5,16}:A[\w-]{34}", None),
    ("Yandex", r"(?:AQVN[\w-]{35,38}|YC[\w-]{38}|t1\.[\w-]+={0,2}\.[\w-]{86})", None),
    ("Dropbox", r"sl\.[\w=-]{135}", None),
    ("Lob", r"(?:live|test)_(?:pub_)?[a-f0-9]{31,35}", None),
    (
        "Authress",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][\w-]{10,32}\.[\w+/=-]{30,120}",
        None,
    ),
    ("Facebook app token", r"[0-9]{15,16}(?:\||%7[Cc])[\w-]{27,40}", None),
    ("bearer or basic credentials", r"(?i:bearer)", r"(?P<pre>\b(?i:bearer)[ \t]+)[\w.~+/-]{16,}=*"),
    (
        "URL password",
        r"://[^/\s:@]*:[^/\s@]+@",
        r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+(?P<post>@)",
    ),
]


def exact(core: str, python: str | None) -> str:
    """The Python expression of one entry."""
    if python is not None:
        return python
    return f"(?<![{_ALNUM}])(?:{core})(?![{_ALNUM}])"
