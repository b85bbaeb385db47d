"""The credential rule set (model/credential_formats.py) and the structural cases: one hand-made
sample per format, the formats and structures that once leaked, and JSON escapes read before
matching. Expected outputs are written out by hand."""

import json

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tracecols.model.secrets import FORMATS, PREFILTER, REDACTED, JsonTextRedactor, key_kind, redact, redact_string

FORMAT_SAMPLES = {
    "JWT in base64": "ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lp",
    "Authress": "sc_abcde12345.abcd.acc_0123456789ab.abcdefghijklmnopqrstuvwxyz0123456789",
    "Facebook app token": "123456789012345|abcdefghijklmnopqrstuvwxyz012",
    "JWT": "eyJu8jzPde0IgxLd6GncfBA.eyJepfJBd0Kh8oOOL8dKLzd.ocJ2isAjIhKtJ0RlgLKO",
    "Grafana API key": "eyJrIjoimxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f",
    "Hugging Face": "hf_8rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsi",
    "Hugging Face organisation": "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",
    "GitHub": "ghp_ajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOz",
    "GitHub fine-grained": "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",
    "GitLab": "glpat-IIXGvOoNZYW2mZp0zVZo",
    "GitLab runner registration": "GR1348941mHFwUbbYrEqmSM9wCZ7U",
    "AWS access key id": "AKIAWXFOGO4MVN4A4WFH",
    "Amazon Bedrock": (
        "ABSK6yYTWmE4lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3m03nbqnsGpWLuqIA1id6Vw5DQL05"
        "HA064GiIjHGb3CXlMaXZjljENUhJduRHHJ"
    ),
    "Google API key": "AIzaEYXg4JdpmrcXgGCJbW56eCuNGMGmSrCGIZE",
    "Google OAuth access token": "ya29.FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zTOlUc",
    "Google OAuth client secret": "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",
    "Google OAuth refresh token": "1//0Wi0B26R08qzjI6GKFSufrdZSlB5er8bOfZqfM2oeq3hDavJA76rNicHTp8hk",
    "Slack token": "xoxb-402344834782-450400088387-p7CgQ0PBQFI14zGtSnovm14T",
    "Slack configuration token": "xoxe.xoxp-1-IZWDIAEQ1KDFY6SPSC3LKR2AQXV9UPCTNWLAVYF4",
    "Slack app token": "xapp-1-R6MP6AFQFJZ-9060443198296-af4941d4072014b3ce10",
    "OpenAI / Anthropic": "sk-proj-OIRpFqaDZeV7G5IfQHeV7VEqZe2qpUWnoVPDF2yeE",
    "Stripe": "sk_live_6RsXcNOPmeMjvqPVStNKiaEd",
    "Twilio": "SKf836f99eee3692f09e2e8c662248b483",
    "npm": "npm_TxoF54Fzbka8FRCztUjAwyuh1vauWv1zh87m",
    "PyPI": "pypi-AgEIcHlwaS5vcmcbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK_gqv81RKMGHZEM9YpvujA-C5Q52",
    "RubyGems": "rubygems_46725a2a7b860dcd6c8a1f8b46287cced9041dff02cee737",
    "Clojars": "CLOJARS_jj7g3f9caioctiq71hget7myqoaa8t3rup47p9pb0tdbm50fqo1xo5cv0xzm",
    "Databricks": "dapi0926f6967e7893f57fd14c1604d115ce",
    "SendGrid": "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",
    "Sendinblue": "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",
    "Mailgun": "key-7eb19731662b5e803b61ba4168160adb",
    "Shopify": "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",
    "DigitalOcean": "dop_v1_d5d32cbe54014c2b54b95523cf6941fa1c257c6f561c5cb347611a3ce9d97dcb",
    "Doppler": "dp.pt.CGClbaNFDpCWNX0D1lZEzgeiwBxfZCGGQccOif7UuXU",
    "Dynatrace": "dt0c01.6FD6YIBEHMI5SKOEWQKUR3JQ.G96EnLqNGpuxcmlzkO7rRu5ykYYqhXHdO2x93CJHLS45gqIO2zVZxqyxKjxvWfCo",
    "Linear": "lin_api_lNV9ds0HqtO93L7Q5uUaVcojsNOBAGx5diFoNPcb",
    "Notion": "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",
    "Postman": "PMAK-bef750110c57513064d6d592-91f0cde2e5738713a818d8962058765a6c",
    "Prefect": "pnu_vMpy62O6SQ1IEE1HSa2bB9UoK4tYnzNLeK6k",
    "Pulumi": "pul-410335b400141212b62c376631129f34369aad80",
    "Perplexity": "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",
    "PlanetScale": "pscale_tkn_WdawFgFSY0l9FLw91GqK8ks0n8SoFkh8OXfFYSJY",
    "ReadMe": "rdme_guwgzzf1bxntq186kyo3i8cwu7j29uk32qoiv3p6mrtjjpu7wkpumqgkgmyjjtt1rmggrn",
    "Scalingo": "tk-us-X7ebZ3CL7csGZaF31DDxp63OHm1FZuG296c0xPbX_neGBuzS",
    "Sentry user token": "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",
    "Sentry organisation token": "sntrys_eyJNOfQ5xj7t2ydf0K5uY8iH1wOLaQan8ePsqMgLj2olXCwYjn5zYIkN5SMYfQ55JYO1tmFSnHfV1CQ4hJh",
    "SettleMint": "sm_pat_qAo0iEFJdED5jSFp",
    "Shippo": "shippo_live_f505aef9ebdd25b001a3ff416d4a3baf69dad819",
    "Sourcegraph": "sgp_9bfca8b6f3a6a942_1cc1c93016f1c4261e5351d30b49895d1a0d1f13",
    "Square": "sq0atp-1Z5ibXt80nk8Btb2abplBp",
    "HashiCorp Vault": "hvs.q8cJF5xgUskL-6GgebhbkXNNv_hOV48vsoUu19X5IQLJhQbtN2FWXWD5KaPHI2ufKssJ-Sk_WzDNhY7AGbX6lTiDYHP9zyB",
    "Terraform Cloud": "mflZSsxKKwzXH2.atlasv1.tFf-VnV7ktOdSJcmeA_BHJ2m5qGeRzxWkdgeV6_iYplGODlYx5uVECweGThdgH9h",
    "Grafana cloud": "glc_gjuWa8mRVtLLCWPgEuxqyhxEykCpZj6R5aDT6mZc",
    "Grafana service account": "glsa_k71oe7N3x4ViXC9g77y1bOeCvu0oEhOx_4a715e4e",
    "age secret key": "AGE-SECRET-KEY-1F3660FP3J42SLX5A78FRD7J8SVHMS00XCJ62RJFPU4GUQJTHMZ6D3TGTWT",
    "1Password secret key": "A3-MFF5RL-NIMTMAE70D7-WVS5F-A04IR-PLXCK",
    "1Password service account": (
        "ops_eyJSxKM2awH7C9HehwTp0136uXT3yKW5ds3g9UFCGbHZIibp9foNlkgtqJ09bbg7SVmqb1MOKDHpSCgw3gTlcr"
        "hDFLGWrhhhz4iILo3ojQKDVzk80b8OySAM1MHcz8dXxvzp1vTB1KZ6u0z2JduHj9R7wp3BQOaxgHleuBmGQboiAzX7"
        "DOcZ44cc3PNr6RNrOIZ7cNgqhHaBp8cshtwPkhdM996G5rfDLI7jChGi4s6AKsrpVfVIs1DNSKoPymJTxD5JtNE"
    ),
    "Adobe client secret": "p8e-E0tbpvomGIyLza7wk38puJuFrs4nsdXb",
    "Alibaba access key id": "LTAIkJeM3wCQdHy1CwVWgHo9",
    "Artifactory": "AKCpRV7jAvQwiRmNN2r01HgV2V7WErYOTO6TiA3gaAXJLhFz9KjA2Yr3NMhy2CSDsUwswzHJM",
    "Azure AD client secret": "yPu8Q~aYV2FyCtlItZjBKyLof06vu1M1p9unB569",
    "ClickHouse Cloud": "4b1dabdqK5Ft6IXtINBH0HURByDwcMRwC8aReHogAx",
    "Cloudflare origin CA": (
        "v1.0-c46dfcea25bab29539ad5966-d513b1d00909c30065f846d34530325fed10a47b851832b6ec017c1e1777"
        "155a0e9d8f27c7d9cf07255bc509cb3acac23db7c6e9b7d180a4742684ee75bb6cc69f67e48eb7c64328c0"
    ),
    "Duffel": "duffel_live_QTKjtayTfSlX2oumQ5geJ6xZGWtmeTtfosi0Tzswz26",
    "EasyPost": "EZAKDXO4O33i7rlbxRZQSw5AbQTSDp2zw5Oglshr6MUoTRczcMkBmWtjyV",
    "Facebook page token": (
        "EAAMcJtOO8lK1oKFTHq7BQRKw7ah1WXPs5c42LMSdpRhcYunX6wV6fASVzVN1orHfw88BC7vSGVS11OOCGdRSnBRG27XiFWmc8S0ZJqlIkXOpIqp9d"
    ),
    "Flutterwave": "FLWSECK_TEST-f557c03ee9911a8e53ee14d7fe860d3a-X",
    "Fly.io": "fo1_U_AfhJMzoN5ouP47ULvjfb7_kQHn_3_yPbTlKGFkrdd",
    "Frame.io": "fio-u-YsLVxvnNPWxTODVrVGEhfnZgB-2-uMksDur4Zlf49yBVae2sKjh1Ri4bwvWLa4Sz",
    "Harness": "pat.8kP62tZkhQM1V9rMRdyC5k.jQLxJL8AxHpKCzqhol94mJVh.o31qPgmHQqTFoJDoIKSh",
    "Heroku": "HRKU-AAk0j4ron6Yvy8lrVhZEgVfbB6Mpr2lzoTvURbGpEVT_fTmTPoeFGTy5c4oc",
    "Infracost": "ico-FheZqljJ7s3RQy1jL4qISWZr8CabvjFG",
    "42 intranet": "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",
    "MaxMind": "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",
    "New Relic": "NRAK-9VEMFLTW3W1E5ULRQ8BKRPBNDZ2",
    "Octopus Deploy": "API-MS6GMPDIDFEVIAMR8AUBNUUB5Z",
    "OpenShift": "sha256~Rwh1flQ-ZG7bdOOh1QulctAslTU2StQDH9eN6JUJqGb",
    "Typeform": "tfp_8mUtDZldrphAxHUtwudSF4-BSX6BPdnbiZShDW0WCdGcH3EDTAP2JM-Bu9I",
    "Mapbox": "pk.eyJ9Wi0tsfvaF35pkuRNM9CnLd4Yn24VxcXX3ClB3i7tRbZhj6ai6tjGVwgWkDR.zfAvP6QTz4v5cLpmYOSaci",
    "Telegram bot": "8939610051:Aop_r2awCsoT-jSBCjIwbHIifzg0UIbPf6K",
    "Yandex": "AQVNQ0IZ2O1XtXX0saEGWEzolegZP4O6a88RWEWT",
    "Dropbox": (
        "sl.iYIPjCHH8S9CsiUAvUEwt6wfPWU2p0tGWnUTM5lJYL5o59wtaqU_EVRWGczaHhwNJPGEH4l-lzq2LVf4WUfL03G"
        "TEXqyViAQjk5WY1-dn77318wi4Y_rbDzZfLQX6plCjbn-lB6"
    ),
    "Lob": "live_16af1d4d14aa605882ac89cd1997cd89641",
}

# formats that keep part of the match, and structures: (text, what it must become)
CAUGHT = [
    (
        "AccountName=acc;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core.windows.net",
        "AccountName=acc;AccountKey=<redacted>;EndpointSuffix=core.windows.net",
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0a2V5MTIz=",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=<redacted>",
    ),
    (
        "https://acc.blob.core.windows.net/c/b?sv=2022-11-02&se=2030-01-01&sig=Rz8%2BqW3xY9kL%3D&sp=r",
        "https://acc.blob.core.windows.net/c/b?sv=2022-11-02&se=2030-01-01&sig=<redacted>&sp=r",
    ),
    (
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIDEXAMPLE%2F20300101&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027",
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>",
    ),
    ("MYSQL_PWD=s3cr3tpw mysql -u root", "MYSQL_PWD=<redacted> mysql -u root"),
    ("python load.py --db-pass hunter2 --rows 10", "python load.py --db-pass <redacted> --rows 10"),
    ('DbConfig(host="db", pw="topsecret1", port=5432)', 'DbConfig(host="db", pw="<redacted>", port=5432)'),
    ("PASS=letmein ./run.sh", "PASS=<redacted> ./run.sh"),
    ("redis://:redispw99@cache:6379/0", "redis://:<redacted>@cache:6379/0"),
    ("kern_sk-proj-4fT9kQ2mX7vB1nZ8cR5wL3yH6jD0gS", "kern_<redacted>"),
    ("tag-hf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2", "tag-<redacted>"),
    (
        "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefghijklmnopqrstuvwx",
        "https://hooks.slack.com/services/<redacted>",
    ),
    (
        "https://org.webhook.office.com/webhookb2/4f8a2c1e-aaaa-bbbb-cccc-0123456789ab@1d2e3f4a-dddd-eeee-ffff-0123456789ab/IncomingWebhook/x",
        "https://org.webhook.office.com/webhookb2/<redacted>",
    ),
    ("Cookie: _gitlab_session=0123456789abcdef0123456789abcdef; path=/", "Cookie: <redacted>; path=/"),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGZ0plant\n-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----<redacted>-----END PGP PRIVATE KEY BLOCK-----",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----<redacted>-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "env=[{'name': 'HF_TOKEN', 'value': 'hfplain1'}, {'name': 'HOME', 'value': '/root'}]",
        "env=[{'name': 'HF_TOKEN', 'value': '<redacted>'}, {'name': 'HOME', 'value': '/root'}]",
    ),
    ("[{'value': 'dbplain2', 'name': 'DB_PASSWORD'}]", "[{'value': '<redacted>', 'name': 'DB_PASSWORD'}]"),
]
KEPT = [
    "void ck::tensor_operation::element_wise::PassThrough, bypass=1 num_passes=3 compass",
    "inspect.py(3346): signature _signature_from_callable design sigmoid",
    "PWD=/home/me OLDPWD=/tmp",
    "shf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2 task-implementation-of-the-feature-x",
    "keyboard monkey key_cache=fp8 SKETCH_MASKED",
    "[{'name': 'HOME', 'value': '/root'}, {'name': 'NUM_TOKENS', 'value': '128'}]",
]


def test_every_format_has_a_sample_and_catches_it():
    names = [n for n, _ in FORMATS]
    structural = {
        "PEM or PGP private key",
        "GitLab session cookie",
        "Slack webhook",
        "Microsoft Teams webhook",
        "bearer or basic credentials",
        "URL password",
    }  # partly kept: in CAUGHT and test_secrets.py
    assert sorted(set(names) - structural) == sorted(FORMAT_SAMPLES)
    for name, sample in FORMAT_SAMPLES.items():
        assert redact_string(f"x {sample} y") == "x <redacted> y", name
        assert redact_string(f"x_{sample}") == "x_<redacted>", name  # glued to `_`
        assert redact_string(f'{{"note": "{sample}"}}') == '{"note": "<redacted>"}', name


@pytest.mark.parametrize("text,want", CAUGHT)
def test_structures_are_caught(text, want):
    assert redact_string(text) == want
    assert redact_string(want) == want


@pytest.mark.parametrize("text", KEPT)
def test_near_misses_are_kept(text):
    assert redact_string(text) is text


def test_keys_of_the_issue():
    for k in (
        "MYSQL_PWD",
        "db-pass",
        "--db-pass",
        "pw",
        "PASS",
        "AccountKey",
        "SharedAccessKey",
        "sig",
        "X-Amz-Signature",
        "SharedAccessSignature",
        "redis_pw",
        "passphrase",
    ):
        assert key_kind(k) == "secret", k
    for k in ("PWD", "OLDPWD", "PassThrough", "num_passes", "bypass", "signature", "sigmoid", "monkey", "keyboard"):
        assert key_kind(k) is None, k


def test_prefilter_is_a_superset_in_pyarrow_and_duckdb():
    texts = [f"x {s} y" for s in FORMAT_SAMPLES.values()] + [t for t, _ in CAUGHT]
    assert pc.all(pc.match_substring_regex(pa.array(texts), PREFILTER)).as_py()
    con = duckdb.connect()
    assert all(con.execute("select regexp_matches(?, ?)", [t, PREFILTER]).fetchone()[0] for t in texts)


ENV_LIST = [
    {"name": "HF_TOKEN", "value": "hfenv1"},
    {"value": "pgenv2", "name": "PGPASSWORD"},
    {"name": "HOME", "value": "/root"},
    {"name": "N_TOKENS", "value": 5},
]
ENV_LIST_REDACTED = [
    {"name": "HF_TOKEN", "value": REDACTED},
    {"value": REDACTED, "name": "PGPASSWORD"},
    {"name": "HOME", "value": "/root"},
    {"name": "N_TOKENS", "value": 5},
]


def test_env_lists_as_objects_and_json_text():
    assert redact({"env": ENV_LIST}) == {"env": ENV_LIST_REDACTED}
    text = json.dumps({"spec": {"env": ENV_LIST}, "n": 1})
    assert json.loads(redact_string(text)) == {"spec": {"env": ENV_LIST_REDACTED}, "n": 1}


def test_env_list_value_before_its_name_across_pieces():
    """The value comes first and the name in a later piece: the value is held, not written."""
    pieces = ['{"env": [{"value": "pgenv2", "x": [1]', ', "name": "PGPASSWORD"}]', ', "n": 1}']
    r = JsonTextRedactor()
    first = r.feed(pieces[0])
    assert "pgenv2" not in first
    out = first + r.feed(pieces[1]) + r.feed(pieces[2]) + r.close()
    assert json.loads(out) == {"env": [{"value": REDACTED, "x": [1], "name": "PGPASSWORD"}], "n": 1}
    r = JsonTextRedactor()  # a name that is no secret: every byte as it was
    text = '{"env": [{"value": "/root",  "x": [1], "name": "HOME"}]}'
    assert r.feed(text[:31]) + r.feed(text[31:]) + r.close() == text


def test_a_value_held_too_long_is_redacted_unseen(monkeypatch):
    monkeypatch.setattr(JsonTextRedactor, "HOLD", 50)
    r = JsonTextRedactor()
    out = r.feed('{"value": "maybe", "filler": [' + ", ".join(["1"] * 100) + "]")
    assert "maybe" not in out and len(r.held) < 60
    out += r.feed(', "name": "HOME"}') + r.close()
    assert json.loads(out)["value"] == REDACTED


ESCAPED = [
    ('{"k": "hf\\u005fQ7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2"}', {"k": REDACTED}),
    ('{"pass\\u0077ord": "plainpw3"}', {"password": REDACTED}),
    ('{"u": "postgres:\\/\\/user:pgpw4@db\\/x"}', {"u": "postgres://user:<redacted>@db/x"}),
    ('{"c": "run\\t--db-pass\\tdbpw5"}', {"c": "run\t--db-pass\t<redacted>"}),
    ('{"t": "\\u0041KIAZ7QW3ERT5YUI8OPA"}', {"t": REDACTED}),
]


@pytest.mark.parametrize("text,want", ESCAPED)
def test_json_escapes_are_read_before_matching(text, want):
    r = JsonTextRedactor()
    out = r.feed(text) + r.close()
    assert json.loads(out) == want


def test_augmented_trace_holds_no_escaped_secret(tmp_path):
    """The augmented file is JSON text copied byte for byte but for its secrets: escaped ones
    included, and env list entries whose value comes first."""
    from tracecols.store.augment import write_augmented

    text = (
        '{"env": [{"value": "envplant1", "name": "HF_TOKEN"}], "cmd": "hf\\u005fQ7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2",'
        ' "pass\\u0077ord": "pwplant2", "db": "postgres:\\/\\/u:pgplant3@db\\/x", "traceEvents": ['
        '{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1,'
        ' "args": {"n": "kern_sk-proj-4fT9kQ2mX7vB1nZ8cR5wL3yH6jD0gS"}}]}'
    )
    p = tmp_path / "t.json"
    p.write_text(text)
    write_augmented(p, tmp_path / "out.json", {0: {"flops": 7}})
    out = json.loads((tmp_path / "out.json").read_text())
    decoded = json.dumps(out)
    for planted in ("envplant1", "Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2", "pwplant2", "pgplant3", "4fT9kQ2mX7vB1nZ8cR5wL3yH6jD0gS"):
        assert planted not in decoded, planted
    assert out["env"] == [{"value": REDACTED, "name": "HF_TOKEN"}] and out["db"] == "postgres://u:<redacted>@db/x"
    assert out["traceEvents"][0]["args"] == {"n": "kern_<redacted>", "flops": 7}
