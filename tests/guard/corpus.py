"""The credential guard's labelled corpus: secrets it must refuse and look-alikes it must pass.

Vendor-format tokens are assembled at import time from a seeded generator and a prefix, so
no realistic-looking credential is ever stored literally in the repository (push protection
and secret scanners stay quiet, and nobody mistakes a fixture for a leak).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

__all__ = ["NEGATIVES", "POSITIVES", "Negative", "Positive", "tok"]

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = UPPER + LOWER + DIGITS
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def tok(seed: str, alphabet: str, n: int) -> str:
    """A deterministic random string; each seed gives the same value on every run."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(seed: str, header: dict[str, str] | None = None) -> str:
    head = header if header is not None else {"alg": "HS256", "typ": "JWT"}
    payload = {"sub": tok(seed, DIGITS, 10), "name": "Jane Roe", "iat": 1716239022}
    sig = tok(seed + "sig", URLSAFE, 43)
    return f"{b64url(json.dumps(head).encode())}.{b64url(json.dumps(payload).encode())}.{sig}"


def pem_body(seed: str, lines: int = 6) -> str:
    return "\n".join("MII" + tok(f"{seed}{i}", B64, 61) for i in range(lines))


def uuid(seed: str) -> str:
    h = tok(seed, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


@dataclass(frozen=True, slots=True)
class Positive:
    """A text that must be refused: a finding whose kind contains `kind` on line `line`."""

    id: str
    text: str
    kind: str
    line: int
    secret: str


@dataclass(frozen=True, slots=True)
class Negative:
    """A text with no credential in it, however much it looks like one."""

    id: str
    text: str


# --- generated values ---------------------------------------------------------------------

AWS_ID = "AKIA" + tok("aws-id", UPPER + "234567", 16)
AWS_ID2 = "AKIA" + tok("aws-id2", UPPER + "234567", 16)
AWS_SECRET = tok("aws-secret", B64, 40)
AWS_SECRET2 = tok("aws-secret2", B64, 40)
GOOGLE_KEY = "AIza" + tok("google", URLSAFE, 35)
GEMINI_KEY = "AIza" + tok("gemini", URLSAFE, 35)
AZURE_ACCOUNT_KEY = tok("azure-acct", B64, 86) + "=="
AZURE_SB_KEY = tok("azure-sb", B64, 43) + "="
AZURE_CLIENT_SECRET = tok("azcs-a", ALNUM, 3) + "8Q~" + tok("azcs-b", ALNUM + "_~.-", 34)
AZURE_SIG = tok("azure-sig", ALNUM, 40) + "%2B" + tok("azure-sig2", ALNUM, 4) + "%3D"
AZURE_STORAGE_KEY = tok("azure-storage", B64, 86) + "=="
GH_PAT = "ghp_" + tok("ghp", ALNUM, 36)
GH_OAUTH = "gho_" + tok("gho", ALNUM, 36)
GH_USER = "ghu_" + tok("ghu", ALNUM, 36)
GH_SERVER = "ghs_" + tok("ghs", ALNUM, 36)
GH_REFRESH = "ghr_" + tok("ghr", ALNUM, 36)
GH_FINE = "github_pat_" + tok("ghf1", ALNUM, 22) + "_" + tok("ghf2", ALNUM, 59)
GL_PAT = "glpat-" + tok("glpat", URLSAFE, 20)
GL_PAT2 = "glpat-" + tok("glpat2", URLSAFE, 20)
BB_APP = "ATBB" + tok("atbb", ALNUM, 32)
BB_PLAIN = tok("bb-plain", ALNUM, 20)
ATLASSIAN = "ATATT3" + tok("atatt", URLSAFE, 180) + "=" + tok("atatt2", HEX.upper(), 8)
SLACK_BOT = f"xoxb-{tok('sb1', DIGITS, 12)}-{tok('sb2', DIGITS, 13)}-{tok('sb3', ALNUM, 24)}"
SLACK_USER = f"xoxp-{tok('su1', DIGITS, 12)}-{tok('su2', DIGITS, 12)}-{tok('su3', HEX, 32)}"
SLACK_LEGACY = f"xoxs-{tok('ss1', DIGITS, 11)}-{tok('ss2', DIGITS, 12)}-{tok('ss3', HEX, 64)}"
SLACK_HOOK = (
    "https://hooks.slack.com/services/T"
    + tok("sh1", UPPER + DIGITS, 8)
    + "/B"
    + tok("sh2", UPPER + DIGITS, 10)
    + "/"
    + tok("sh3", ALNUM, 24)
)
DISCORD_BOT = (
    "M" + tok("db1", ALNUM, 23) + "." + tok("db2", URLSAFE, 6) + "." + tok("db3", URLSAFE, 38)
)
DISCORD_HOOK = (
    "https://discord.com/api/webhooks/" + tok("dh1", DIGITS, 18) + "/" + tok("dh2", URLSAFE, 68)
)
TELEGRAM = tok("tg1", DIGITS, 10) + ":AA" + tok("tg2", URLSAFE, 33)
TELEGRAM2 = tok("tg3", DIGITS, 9) + ":AA" + tok("tg4", URLSAFE, 33)
STRIPE_LIVE = "sk_live_" + tok("stripe-live", ALNUM, 24)
STRIPE_TEST = "sk_test_" + tok("stripe-test", ALNUM, 24)
STRIPE_RESTRICTED = "rk_live_" + tok("stripe-rk", ALNUM, 24)
STRIPE_WHSEC = "whsec_" + tok("whsec", ALNUM, 32)
SQUARE = "EAAA" + tok("square", URLSAFE, 60)
SQUARE_SECRET = "sq0csp-" + tok("sq-secret", URLSAFE, 43)
BRAINTREE = f"access_token$production${tok('bt1', LOWER + DIGITS, 16)}${tok('bt2', HEX, 32)}"
OPENAI_PROJ = "sk-proj-" + tok("oai-proj", URLSAFE, 120)
OPENAI_LEGACY = "sk-" + tok("oai-legacy", ALNUM, 48)
ANTHROPIC = "sk-ant-api03-" + tok("anthropic", URLSAFE, 93) + "AA"
HF = "hf_" + tok("hf", ALNUM, 34)
GROQ = "gsk_" + tok("groq", ALNUM, 52)
REPLICATE = "r8_" + tok("replicate", ALNUM, 37)
COHERE = tok("cohere", ALNUM, 40)
MISTRAL = tok("mistral", ALNUM, 32)
PERPLEXITY = "pplx-" + tok("pplx", ALNUM, 48)
NPM = "npm_" + tok("npm", ALNUM, 36)
PYPI = "pypi-AgEIcHlwaS5vcmc" + tok("pypi", URLSAFE, 120)
RUBYGEMS = "rubygems_" + tok("rubygems", HEX, 48)
NUGET = "oy2" + tok("nuget", LOWER + DIGITS, 43)
DOCKER = "dckr_pat_" + tok("docker", URLSAFE, 27)
SENDGRID = "SG." + tok("sg1", URLSAFE, 22) + "." + tok("sg2", URLSAFE, 43)
TWILIO_KEY = "SK" + tok("twilio-sk", HEX, 32)
TWILIO_AUTH = tok("twilio-auth", HEX, 32)
MAILGUN = "key-" + tok("mailgun", ALNUM, 32)
MAILCHIMP = tok("mailchimp", HEX, 32) + "-us14"
SHOPIFY = "shpat_" + tok("shopify", HEX, 32)
DIGITALOCEAN = "dop_v1_" + tok("do", HEX, 64)
HEROKU = "HRKU-AA" + tok("heroku", URLSAFE, 58)
HEROKU_UUID = uuid("heroku-uuid")
VAULT = "hvs." + tok("vault", URLSAFE, 90)
DOPPLER = "dp.pt." + tok("doppler", ALNUM, 43)
LINEAR = "lin_api_" + tok("linear", ALNUM, 40)
DATABRICKS = "dapi" + tok("databricks", HEX, 32)
AGE_KEY = "AGE-SECRET-KEY-1" + tok("age", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
GOOGLE_OAUTH = "GOCSPX-" + tok("gocspx", URLSAFE, 28)
JWT_1 = jwt("jwt1")
JWT_2 = jwt("jwt2", {"alg": "RS256", "kid": "k1"})
API_TOKEN = tok("api-token", ALNUM, 40)
DJANGO_SECRET = "django-insecure-" + tok("django", LOWER + DIGITS + "!@#%^&*(-_=+)", 50)
CLIENT_SECRET = tok("client-secret", URLSAFE, 40)
X_API_KEY = tok("x-api-key", ALNUM, 32)
BEARER = tok("bearer", ALNUM + "._-", 48)
CJK_KEY = tok("cjk-key", ALNUM, 32)
CJK_TOKEN = tok("cjk-token", ALNUM, 36)
DE_KEY = tok("de-key", ALNUM, 32)
EN_KEY = tok("en-key", ALNUM, 32)
CRED_B64 = base64.b64encode(b"deploy:" + tok("basic", ALNUM, 18).encode()).decode()
RSA_BODY = pem_body("rsa")
SSH_BODY = (
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
    + tok("openssh", B64, 22)
    + "\n"
    + (pem_body("openssh", 4))
)
EC_BODY = pem_body("ec", 3)
PGP_BODY = pem_body("pgp", 5)
ENC_BODY = pem_body("enc", 5)
GCP_BODY = pem_body("gcp", 4)

# Passwords a person would actually type, built from pieces so no scanner sees them whole.
PW_DB = "Tq" + "9v!" + "mB27" + "wz"
PW_MONGO = "Kp" + "4Lr" + "8zQs"
PW_REDIS = "r3d" + "Is" + "-Vx7"
PW_HTTP = "hun" + "ter" + "7Qx"
PW_AMQP = "Rb" + "7mq" + "Z2k"
PW_JDBC = "J9" + "dbc" + "Pw!"
PW_ODBC = "Odb" + "c#44" + "Lq"
PW_MYSQL = "My" + "Sq1" + "Rt9"
PW_CURL = "Cu" + "r1Pw" + "9z"
PW_SSHPASS = "Ss" + "hP4" + "ssQ"
PW_NETRC = "Nt" + "rc8" + "Pw2x"
PW_ENV = "e" + "Nv5" + "Pw9q"
PW_YAML = "Yml" + "Pw4" + "zR"
PW_JSON = "js" + "0nPw" + "!Q"
PW_TOML = "T0" + "mlPw" + "#r"
PW_INI = "in" + "iPw" + "7Kq"
PW_KT = "K0" + "tlin" + "Pw5"
PW_FLAG = "Fl" + "ag!" + "Pw3"
PW_XML = "Xm" + "lPw" + "8!v"
PW_EN = "hunter" + "2x!"
PW_EN2 = "Tr0ub" + "4dor&3"
PW_DE = "Sommer" + "2024!"
PW_DE2 = "Herbst" + "#2023"
PW_DE3 = "Blume7" + "Regen"
PW_ZH = "abc123" + "XYZ"
PW_ZH2 = "Qw3" + "rty!zx"
PW_ZH3 = "Zx9#" + "kLm2"
PW_MD = "S3cure" + "!Lamp"
PW_BB = "bB" + "tucket" + "Pw9"
PW_PG = "Pg" + "Pass" + "77w"
PW_SPACE = "swordfish"
PW_PHRASE_EN = "Wq" + "7rt" + "Zp2!"
PW_PHRASE_DE = "7X8s" + "51fbLt"
PW_CHANGED = "u8jz" + "PDe0Ig!"
PW_BACKTICK = "ptgU" + "zEjf" + "ebzJ"
PW_TABLE = "Tb9" + "!cell" + "Pw"
PW_REDIS_CLI = "rAFq" + "ftvbe" + "EahsZh9"
PW_ZH_LETTERS = "hViI" + "MTloiO"
DICEWARE = "correct horse battery staple"
PW_SQL = "Sq9" + "kqL" + "mz2"
PW_SQL2 = "Pg9" + "kqL" + "mz2!"
PW_PHP = "Php9" + "kq!" + "Lmz2"
PW_PS = "Ps9!" + "kqL" + "mz2"
PW_COMPOSE = "Dc9" + "kq!" + "Lmz2"
QUERY_KEY = tok("query-key", ALNUM, 36)
JWT_MADE_UP = "my-super-" + "s3cret-" + "jwt-2024"

# --- positives ----------------------------------------------------------------------------

_POS: list[tuple[str, str, str, int, str]] = [
    # cloud
    ("aws_key_id_env", f"AWS_ACCESS_KEY_ID={AWS_ID}\n", "AWS access key id", 1, AWS_ID),
    (
        "aws_credentials_file",
        f"[default]\naws_access_key_id = {AWS_ID2}\naws_secret_access_key = {AWS_SECRET}\n",
        "AWS secret access key",
        3,
        AWS_SECRET,
    ),
    (
        "aws_pair_in_prose",
        f"# Backup bot\n\nKeys for the backup bot: `{AWS_ID}` / `{AWS_SECRET2}` (rotate monthly).",
        "AWS secret access key",
        3,
        AWS_SECRET2,
    ),
    (
        "aws_secret_yaml",
        f'aws:\n  region: eu-west-1\n  aws_secret_access_key: "{AWS_SECRET2}"\n',
        "AWS secret access key",
        3,
        AWS_SECRET2,
    ),
    (
        "google_api_key_js",
        f'const firebaseConfig = {{\n  apiKey: "{GOOGLE_KEY}",\n  projectId: "demo",\n}};',
        "Google API key",
        2,
        GOOGLE_KEY,
    ),
    (
        "gcp_service_account_json",
        json.dumps(
            {
                "type": "service_account",
                "project_id": "demo-project",
                "private_key_id": tok("gcp-kid", HEX, 40),
                "private_key": "-----BEGIN PRIVATE KEY-----\n"
                + GCP_BODY
                + "\n-----END PRIVATE KEY-----\n",
                "client_email": "svc@demo-project.iam.gserviceaccount.com",
            },
            indent=2,
        ),
        "private key",
        5,
        GCP_BODY.split("\n")[0],
    ),
    (
        "azure_storage_connection_string",
        "Storage for the exporter:\n\nDefaultEndpointsProtocol=https;AccountName=acmelogs;"
        f"AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
        "Azure storage account key",
        3,
        AZURE_ACCOUNT_KEY,
    ),
    (
        "azure_service_bus",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey"
        f";SharedAccessKey={AZURE_SB_KEY}",
        "Azure shared access key",
        1,
        AZURE_SB_KEY,
    ),
    (
        "azure_client_secret_env",
        f"AZURE_TENANT_ID=common\nAZURE_CLIENT_SECRET={AZURE_CLIENT_SECRET}\n",
        "Azure client secret",
        2,
        AZURE_CLIENT_SECRET,
    ),
    (
        "azure_sas_url",
        "Download with:\n"
        "https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2025-01-01T00:00:00Z&sig={AZURE_SIG}",
        "Azure SAS token",
        2,
        AZURE_SIG,
    ),
    (
        "azure_storage_key_assignment",
        f"AZURE_STORAGE_KEY={AZURE_STORAGE_KEY}",
        "Azure",
        1,
        AZURE_STORAGE_KEY,
    ),
    # version control
    (
        "github_pat_prose",
        f"Use my token {GH_PAT} for the nightly CI job.",
        "GitHub token",
        1,
        GH_PAT,
    ),
    ("github_oauth_json", f'{{\n  "oauth": "{GH_OAUTH}"\n}}', "GitHub token", 2, GH_OAUTH),
    ("github_user_yaml", f"github:\n  user_token: {GH_USER}\n", "GitHub token", 2, GH_USER),
    (
        "github_server_in_remote",
        f"git remote set-url origin https://x-access-token:{GH_SERVER}@github.com/acme/app.git",
        "GitHub token",
        1,
        GH_SERVER,
    ),
    ("github_refresh_inline_code", f"Refresh token: `{GH_REFRESH}`", "GitHub token", 1, GH_REFRESH),
    (
        "github_fine_grained",
        f"## CI\n\n```sh\nexport GH_TOKEN={GH_FINE}\n```\n",
        "GitHub token",
        4,
        GH_FINE,
    ),
    (
        "gitlab_clone_url",
        f"git clone https://oauth2:{GL_PAT}@gitlab.com/acme/infra.git",
        "GitLab token",
        1,
        GL_PAT,
    ),
    ("gitlab_env", f"GITLAB_TOKEN={GL_PAT2}", "GitLab token", 1, GL_PAT2),
    ("bitbucket_app_password", f"bitbucket: {BB_APP}", "Bitbucket app password", 1, BB_APP),
    (
        "bitbucket_app_password_assignment",
        f"BITBUCKET_USERNAME=acme-ci\nBITBUCKET_APP_PASSWORD={PW_BB}\n",
        "Bitbucket",
        2,
        PW_BB,
    ),
    ("atlassian_api_token", f"JIRA_API_TOKEN={ATLASSIAN}", "Atlassian API token", 1, ATLASSIAN),
    # chat
    (
        "slack_bot_yaml",
        f"slack:\n  channel: '#alerts'\n  bot_token: {SLACK_BOT}\n",
        "Slack token",
        3,
        SLACK_BOT,
    ),
    (
        "slack_user_german_prose",
        f"Der Slack-Token für den Export ist {SLACK_USER}, bitte nicht teilen.",
        "Slack token",
        1,
        SLACK_USER,
    ),
    ("slack_legacy_export", f"export SLACK_TOKEN='{SLACK_LEGACY}'", "Slack token", 1, SLACK_LEGACY),
    (
        "slack_webhook_curl",
        f"curl -X POST -H 'Content-type: application/json' \\\n  --data '{{\"text\":\"hi\"}}' \\\n"
        f"  {SLACK_HOOK}",
        "Slack webhook",
        3,
        SLACK_HOOK.rsplit("/", 1)[1],
    ),
    (
        "discord_bot_python",
        f'```python\nimport discord\n\nclient.run("{DISCORD_BOT}")\n```',
        "Discord bot token",
        4,
        DISCORD_BOT,
    ),
    (
        "discord_webhook",
        f"Alerts go to {DISCORD_HOOK} (channel #ops).",
        "Discord webhook",
        1,
        DISCORD_HOOK.rsplit("/", 1)[1],
    ),
    (
        "telegram_env",
        f"TELEGRAM_CHAT_ID=-100123\nTELEGRAM_BOT_TOKEN={TELEGRAM}\n",
        "Telegram bot token",
        2,
        TELEGRAM,
    ),
    (
        "telegram_api_url",
        f"Test with `curl https://api.telegram.org/bot{TELEGRAM2}/getMe`",
        "Telegram bot token",
        1,
        TELEGRAM2,
    ),
    # payment
    (
        "stripe_live_python",
        f'import stripe\nstripe.api_key = "{STRIPE_LIVE}"\n',
        "Stripe secret key",
        2,
        STRIPE_LIVE,
    ),
    ("stripe_test_env", f"STRIPE_SECRET_KEY={STRIPE_TEST}", "Stripe secret key", 1, STRIPE_TEST),
    (
        "stripe_restricted",
        f"Restricted key for reporting: {STRIPE_RESTRICTED}",
        "Stripe restricted key",
        1,
        STRIPE_RESTRICTED,
    ),
    (
        "stripe_webhook_secret",
        f"STRIPE_WEBHOOK_SECRET={STRIPE_WHSEC}",
        "Stripe webhook secret",
        1,
        STRIPE_WHSEC,
    ),
    ("square_access_token", f"square_token: {SQUARE}", "Square access token", 1, SQUARE),
    (
        "square_oauth_secret",
        f"SQUARE_APPLICATION_SECRET={SQUARE_SECRET}",
        "Square OAuth secret",
        1,
        SQUARE_SECRET,
    ),
    (
        "braintree_access_token",
        f"gateway = braintree.BraintreeGateway(access_token='{BRAINTREE}')",
        "PayPal/Braintree",
        1,
        BRAINTREE.split("$", 2)[2],
    ),
    # LLM vendors
    ("openai_project_env", f"OPENAI_API_KEY={OPENAI_PROJ}\n", "OpenAI API key", 1, OPENAI_PROJ),
    (
        "openai_legacy_python",
        f'from openai import OpenAI\n\nclient = OpenAI(api_key="{OPENAI_LEGACY}")',
        "OpenAI API key",
        3,
        OPENAI_LEGACY,
    ),
    (
        "anthropic_toml",
        f'[providers.anthropic]\nmodel = "claude"\napi_key = "{ANTHROPIC}"\n',
        "Anthropic API key",
        3,
        ANTHROPIC,
    ),
    ("gemini_shell", f"export GEMINI_API_KEY={GEMINI_KEY}", "Google API key", 1, GEMINI_KEY),
    (
        "huggingface_prose",
        f"Note to self: the HF token is {HF} (read-only scope).",
        "Hugging Face token",
        1,
        HF,
    ),
    ("groq_json", f'{{"groq": {{"key": "{GROQ}"}}}}', "Groq API key", 1, GROQ),
    ("replicate_env", f"REPLICATE_API_TOKEN={REPLICATE}", "Replicate API token", 1, REPLICATE),
    ("cohere_assignment", f"COHERE_API_KEY={COHERE}", "Cohere API key", 1, COHERE),
    (
        "mistral_yaml",
        f'llm:\n  provider: mistral\n  mistral_api_key: "{MISTRAL}"\n',
        "Mistral API key",
        3,
        MISTRAL,
    ),
    ("perplexity_key", f"PPLX_KEY={PERPLEXITY}", "Perplexity API key", 1, PERPLEXITY),
    # package registries
    (
        "npmrc_token",
        f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={NPM}\n",
        "npm token",
        2,
        NPM,
    ),
    (
        "pypirc_token",
        f"[pypi]\nusername = __token__\npassword = {PYPI}\n",
        "PyPI token",
        3,
        PYPI,
    ),
    (
        "rubygems_credentials",
        f"---\n:rubygems_api_key: {RUBYGEMS}\n",
        "RubyGems API key",
        2,
        RUBYGEMS,
    ),
    (
        "nuget_push",
        f"dotnet nuget push pkg.nupkg --api-key {NUGET} --source nuget.org",
        "NuGet API key",
        1,
        NUGET,
    ),
    ("docker_login", f"echo {DOCKER} | docker login -u acme --password-stdin", "Docker", 1, DOCKER),
    # other SaaS
    ("sendgrid_env", f"SENDGRID_API_KEY={SENDGRID}", "SendGrid API key", 1, SENDGRID),
    ("twilio_api_key", f"Twilio key SID {TWILIO_KEY} for SMS.", "Twilio API key", 1, TWILIO_KEY),
    (
        "twilio_auth_token",
        f"TWILIO_ACCOUNT_SID=AC{tok('twilio-ac', HEX, 32)}\nTWILIO_AUTH_TOKEN={TWILIO_AUTH}\n",
        "Twilio",
        2,
        TWILIO_AUTH,
    ),
    ("mailgun_key", f"mailgun:\n  api_key: {MAILGUN}\n", "Mailgun API key", 2, MAILGUN),
    ("mailchimp_key", f"MAILCHIMP_KEY={MAILCHIMP}", "Mailchimp API key", 1, MAILCHIMP),
    ("shopify_token", f"X-Shopify-Access-Token: {SHOPIFY}", "Shopify access token", 1, SHOPIFY),
    (
        "digitalocean_token",
        f"doctl auth init --access-token {DIGITALOCEAN}",
        "DigitalOcean token",
        1,
        DIGITALOCEAN,
    ),
    ("heroku_new_format", f"HEROKU_API_KEY={HEROKU}", "Heroku API key", 1, HEROKU),
    ("heroku_uuid_assignment", f"HEROKU_API_KEY={HEROKU_UUID}", "Heroku", 1, HEROKU_UUID),
    ("vault_token", f"export VAULT_TOKEN={VAULT}", "Vault token", 1, VAULT),
    ("doppler_token", f"DOPPLER_TOKEN={DOPPLER}", "Doppler token", 1, DOPPLER),
    ("linear_key", f"Linear: {LINEAR}", "Linear API key", 1, LINEAR),
    ("databricks_token", f"DATABRICKS_TOKEN={DATABRICKS}", "Databricks token", 1, DATABRICKS),
    ("age_secret_key", f"# created: 2024-01-01\n{AGE_KEY}\n", "age secret key", 2, AGE_KEY),
    (
        "google_oauth_client_secret",
        f'{{"web": {{"client_id": "123.apps.googleusercontent.com", "client_secret": '
        f'"{GOOGLE_OAUTH}"}}}}',
        "Google OAuth client secret",
        1,
        GOOGLE_OAUTH,
    ),
    # JWTs
    (
        "jwt_in_curl",
        f'curl https://api.acme.dev/v1/me \\\n  -H "Authorization: Bearer {JWT_1}"',
        "JWT",
        2,
        JWT_1,
    ),
    ("jwt_in_json", f'{{\n  "id_token": "{JWT_2}"\n}}', "JWT", 2, JWT_2),
    # private keys
    (
        "rsa_private_key_fenced",
        "Deploy key for the mirror:\n\n```\n-----BEGIN RSA PRIVATE KEY-----\n"
        f"{RSA_BODY}\n-----END RSA PRIVATE KEY-----\n```\n",
        "private key",
        4,
        RSA_BODY.split("\n")[2],
    ),
    (
        "openssh_private_key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_BODY}\n-----END OPENSSH PRIVATE KEY-----",
        "private key",
        1,
        SSH_BODY.split("\n")[1],
    ),
    (
        "ec_private_key",
        f"key.pem:\n-----BEGIN EC PRIVATE KEY-----\n{EC_BODY}\n-----END EC PRIVATE KEY-----\n",
        "private key",
        2,
        EC_BODY.split("\n")[1],
    ),
    (
        "pgp_private_key_block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        f"{PGP_BODY}\n=Ab1c\n-----END PGP PRIVATE KEY BLOCK-----\n",
        "private key",
        1,
        PGP_BODY.split("\n")[3],
    ),
    (
        "encrypted_pem",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        f"DEK-Info: AES-128-CBC,{tok('dek', HEX.upper(), 32)}\n\n{ENC_BODY}\n"
        "-----END RSA PRIVATE KEY-----",
        "private key",
        1,
        ENC_BODY.split("\n")[0],
    ),
    # connection strings and URLs with passwords
    (
        "postgres_url",
        f"DATABASE_URL=postgres://app:{PW_DB}@db.internal:5432/app",
        "connection string with password",
        1,
        PW_DB,
    ),
    (
        "mongodb_srv",
        f"Atlas: mongodb+srv://reporting:{PW_MONGO}@cluster0.ab1cd.mongodb.net/?retryWrites=true",
        "connection string with password",
        1,
        PW_MONGO,
    ),
    (
        "redis_password_only",
        f"cache:\n  url: redis://:{PW_REDIS}@cache.internal:6379/0\n",
        "connection string with password",
        2,
        PW_REDIS,
    ),
    (
        "https_basic_in_url",
        f"Mirror: https://deploy:{PW_HTTP}@artifacts.acme.dev/releases/",
        "URL with password",
        1,
        PW_HTTP,
    ),
    (
        "amqp_url",
        f"BROKER_URL = 'amqp://worker:{PW_AMQP}@rabbit:5672//'",
        "connection string with password",
        1,
        PW_AMQP,
    ),
    (
        "jdbc_query_password",
        f"jdbc:mysql://db:3306/app?user=app&password={PW_JDBC}&useSSL=true",
        "password",
        1,
        PW_JDBC,
    ),
    (
        "odbc_connection_string",
        f"Server=tcp:sql.acme.net,1433;Database=app;User Id=sa;Password={PW_ODBC};Encrypt=True;",
        "password",
        1,
        PW_ODBC,
    ),
    (
        "mysql_cli_password",
        f"Restore:\n\n    mysql -h db -u root -p{PW_MYSQL} app < dump.sql\n",
        "password",
        3,
        PW_MYSQL,
    ),
    (
        "curl_basic_user",
        f"curl -u admin:{PW_CURL} https://jenkins.acme.dev/api/json",
        "basic auth",
        1,
        PW_CURL,
    ),
    ("sshpass", f"sshpass -p '{PW_SSHPASS}' ssh pi@10.0.0.7", "password", 1, PW_SSHPASS),
    (
        "netrc",
        f"machine api.acme.dev\n  login deploy\n  password {PW_NETRC}\n",
        "netrc password",
        3,
        PW_NETRC,
    ),
    # key = value assignments in config and code
    ("dotenv_password", f"DB_HOST=localhost\nDB_PASSWORD={PW_ENV}\n", "password", 2, PW_ENV),
    (
        "yaml_password",
        f"database:\n  user: app\n  password: {PW_YAML}\n",
        "password assignment",
        3,
        PW_YAML,
    ),
    ("json_password", f'{{"user": "app", "password": "{PW_JSON}"}}', "password", 1, PW_JSON),
    ("toml_password", f'[db]\nhost = "db"\npassword = "{PW_TOML}"\n', "password", 3, PW_TOML),
    ("ini_password", f"[smtp]\nhost = mail.acme.dev\npass = {PW_INI}\n", "password", 3, PW_INI),
    ("shell_export_token", f'export API_TOKEN="{API_TOKEN}"', "token", 1, API_TOKEN),
    (
        "django_secret_key",
        f"# settings.py\nSECRET_KEY = '{DJANGO_SECRET}'\n",
        "secret key",
        2,
        DJANGO_SECRET,
    ),
    (
        "oauth_client_secret_yaml",
        f"oauth:\n  client_id: acme-web\n  client_secret: {CLIENT_SECRET}\n",
        "client secret",
        3,
        CLIENT_SECRET,
    ),
    ("x_api_key_header", f"X-API-Key: {X_API_KEY}", "API key", 1, X_API_KEY),
    ("kotlin_typed", f'val password: String = "{PW_KT}"', "password", 1, PW_KT),
    (
        "cli_flag_password",
        f"./manage.py createsuperuser --password {PW_FLAG}",
        "password",
        1,
        PW_FLAG,
    ),
    (
        "xml_password",
        f"<datasource>\n  <password>{PW_XML}</password>\n</datasource>",
        "password",
        2,
        PW_XML,
    ),
    ("bearer_opaque", f"Authorization: Bearer {BEARER}", "bearer token", 1, BEARER),
    ("basic_auth_header", f"Authorization: Basic {CRED_B64}", "basic auth", 1, CRED_B64),
    ("pgpassword_env", f"PGPASSWORD={PW_PG} psql -h db -U app", "password", 1, PW_PG),
    # prose: English, German, Chinese
    ("en_password_is", f"the password is {PW_EN}", "password", 1, PW_EN),
    (
        "en_wifi_password_colon",
        f"# Office\n\nMy wifi password is: {PW_EN2} (guest network).",
        "password",
        3,
        PW_EN2,
    ),
    ("en_quoted_password", f"The staging password is '{PW_SPACE}'.", "password", 1, PW_SPACE),
    ("en_api_key_is", f"The API key is {EN_KEY} for the sandbox.", "API key", 1, EN_KEY),
    ("de_passwort_colon", f"Passwort: {PW_DE}", "password", 1, PW_DE),
    ("de_kennwort_lautet", f"Das Kennwort lautet {PW_DE2} – bitte ändern.", "password", 1, PW_DE2),
    ("de_wlan_passwort_ist", f"Das WLAN-Passwort ist {PW_DE3}.", "password", 1, PW_DE3),
    ("de_api_schluessel", f"Der API-Schlüssel lautet {DE_KEY}.", "API key", 1, DE_KEY),
    ("zh_password_is", f"密码是 {PW_ZH}", "password", 1, PW_ZH),
    ("zh_db_password_colon", f"数据库密码：{PW_ZH2}，请勿外传。", "password", 1, PW_ZH2),
    ("zh_koulin", f"服务器口令：{PW_ZH3}", "password", 1, PW_ZH3),
    ("zh_api_miyao", f"API密钥：{CJK_KEY}", "key", 1, CJK_KEY),
    ("zh_lingpai", f"访问令牌是 {CJK_TOKEN}", "token", 1, CJK_TOKEN),
    (
        "en_password_for_phrase",
        f"The password for the staging DB is {PW_PHRASE_EN} (rotate it in May).",
        "password",
        1,
        PW_PHRASE_EN,
    ),
    (
        "de_passwort_fuer_phrase",
        f"Das Passwort für den Server lautet {PW_PHRASE_DE}",
        "password",
        1,
        PW_PHRASE_DE,
    ),
    (
        "en_password_changed_to",
        f"Heads-up:\nthe root password was changed to {PW_CHANGED} on Monday.",
        "password",
        2,
        PW_CHANGED,
    ),
    (
        "en_password_backticked",
        f"Use password `{PW_BACKTICK}` for the VPN.",
        "password",
        1,
        PW_BACKTICK,
    ),
    (
        "md_table_password",
        "| service | user | password |\n|---|---|---|\n| grafana | admin |\n\n"
        f"| password | {PW_TABLE} |",
        "password",
        5,
        PW_TABLE,
    ),
    ("sql_identified_by", f"CREATE USER app IDENTIFIED BY '{PW_SQL}';", "SQL password", 1, PW_SQL),
    (
        "postgres_role_password",
        f"CREATE ROLE app WITH LOGIN PASSWORD '{PW_SQL2}';",
        "password",
        1,
        PW_SQL2,
    ),
    ("jwt_secret_made_up", f"JWT_SECRET={JWT_MADE_UP}", "secret", 1, JWT_MADE_UP),
    ("php_array", f"'password' => '{PW_PHP}',", "password", 1, PW_PHP),
    ("powershell_env", f'$env:DB_PASSWORD = "{PW_PS}"', "password", 1, PW_PS),
    (
        "compose_environment_list",
        f"services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={PW_COMPOSE}\n",
        "password",
        4,
        PW_COMPOSE,
    ),
    (
        "url_query_api_key",
        f"GET https://api.acme.dev/v1/data?api_key={QUERY_KEY}&format=json",
        "API key",
        1,
        QUERY_KEY,
    ),
    ("redis_cli_auth", f"redis-cli -h cache -a {PW_REDIS_CLI} PING", "password", 1, PW_REDIS_CLI),
    ("zh_password_letters_only", f"登录密码为 {PW_ZH_LETTERS}", "password", 1, PW_ZH_LETTERS),
    ("diceware_passphrase", f"gpg:\n  passphrase: {DICEWARE}\n", "passphrase", 2, DICEWARE),
    (
        "md_bold_password",
        f"## Router\n\n- **User:** admin\n- **Password:** `{PW_MD}`\n",
        "password",
        4,
        PW_MD,
    ),
]

POSITIVES: tuple[Positive, ...] = tuple(Positive(*row) for row in _POS)

# --- negatives ----------------------------------------------------------------------------

SHA1 = tok("sha1", HEX, 40)
SHA256 = tok("sha256", HEX, 64)
MD5 = tok("md5", HEX, 32)
ED25519_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("ed-pub", B64, 43)
RSA_PUB = "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + tok("rsa-pub", B64, 300)
PUB_BODY = pem_body("pub", 4)
CERT_BODY = pem_body("cert", 8)
INTEGRITY = "sha512-" + tok("integrity", B64, 86) + "=="
ORDINARY_B64 = base64.b64encode(
    b"Meeting notes: ship the importer on Friday, then review the retrieval evals."
).decode()
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5Er"
    "kJggg=="
)
NO_ALG_JWT = jwt("noalg", {"typ": "JWT", "kid": "k1"})
NEXT_PAGE = tok("next-page", URLSAFE, 44)

_NEG: list[tuple[str, str]] = [
    ("commit_sha_prose", f"Fixed in commit {SHA1} on main."),
    ("commit_sha256", f"object format sha256, HEAD is {SHA256}"),
    ("short_sha", "Reverted abc1234 and 9f8e7d6c5b after the incident."),
    ("uuid_prose", f"The run id was {uuid('run')}."),
    ("uuid_request_id", f"request_id: {uuid('req')}\nstatus: 500\n"),
    ("sha256_checksum", f"sha256: {SHA256}  memdir-0.1.0.tar.gz"),
    ("md5sum", f"md5sum: {MD5}"),
    ("checksum_assignment", f'checksum = "{SHA256}"'),
    ("docker_digest", f"image: nginx@sha256:{SHA256}"),
    ("ssh_ed25519_public", f"ssh-ed25519 {ED25519_PUB} alice@laptop"),
    ("ssh_rsa_public_authorized_keys", f"# authorized_keys\nssh-rsa {RSA_PUB} deploy@ci"),
    ("public_key_field", f"public_key: ssh-ed25519 {ED25519_PUB}"),
    ("pem_public_key", f"-----BEGIN PUBLIC KEY-----\n{PUB_BODY}\n-----END PUBLIC KEY-----"),
    ("pem_certificate", f"-----BEGIN CERTIFICATE-----\n{CERT_BODY}\n-----END CERTIFICATE-----"),
    (
        "pgp_public_key_block",
        f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{PUB_BODY}\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    (
        "pem_private_key_placeholder",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    ),
    ("angle_placeholder", "OPENAI_API_KEY=<YOUR_API_KEY>"),
    ("dollar_brace_placeholder", "api_key: ${API_KEY}\ntoken: ${GITHUB_TOKEN}"),
    ("dollar_env_var", 'curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api.openai.com'),
    ("github_actions_secret", "env:\n  TOKEN: ${{ secrets.TOKEN }}\n  PASSWORD: ${{ secrets.DB }}"),
    ("jinja_placeholder", 'password: "{{ vault_db_password }}"'),
    ("x_placeholder", "password: xxxxxxxx\napi_key: XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("your_api_key_here", "API_KEY=your-api-key-here"),
    ("your_token_here", 'GITHUB_TOKEN="your_token_here"'),
    ("changeme", "password: changeme"),
    ("stars", "password: ********\ntoken: ***"),
    ("ellipsis", "token: ...\nThe key starts with sk-... and is 51 chars."),
    ("redacted_word", "password: REDACTED\nsecret: [redacted]"),
    ("redaction_marker", "OPENAI_API_KEY=[REDACTED:OpenAI API key]"),
    ("os_environ", 'password = os.environ["DB_PASSWORD"]\ntoken = os.getenv("TOKEN")'),
    ("process_env", "const apiKey = process.env.OPENAI_API_KEY;"),
    ("settings_reference", "api_key = settings.OPENAI_API_KEY"),
    ("request_header_reference", 'token = request.headers["Authorization"]'),
    ("getpass_call", 'password = getpass.getpass("DB password: ")'),
    ("input_call", 'pw = input("Password: ")'),
    (
        "aws_documented_example",
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    ),
    ("dummy_marker", 'api_key = "dummy-key-for-unit-tests-1234567890"'),
    ("fake_marker", "token: fake_token_for_tests_1234567890abc"),
    ("sample_marker", "STRIPE_KEY=sk_live_SAMPLE0000000000000000000"),
    ("x_token_body", "GH_TOKEN=ghp_" + "x" * 36),
    ("aws_x_placeholder", "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX"),
    ("ordinary_base64", f"The payload was `{ORDINARY_B64}` (base64 of the notes)."),
    ("base64_content_field", f"content: {ORDINARY_B64}\nencoding: base64"),
    ("data_uri_png", f"![dot](data:image/png;base64,{PNG_B64})"),
    ("npm_integrity", f'"node_modules/left-pad": {{\n  "integrity": "{INTEGRITY}"\n}}'),
    ("prose_reset_password", "To reset your password in settings, click the avatar."),
    ("prose_password_field", "The password field must be 12 chars or more."),
    ("prose_password_incorrect", "Your password is incorrect. Try again."),
    ("prose_password_length", "The password is at least 12 characters long and has a digit."),
    ("prose_password_manager", "Use a password manager; never reuse passwords across sites."),
    ("prose_token_stored", "The token is stored in the OS keychain, not in the repo."),
    ("prose_api_key_vault", "API key rotation is handled by Vault every 30 days."),
    ("prose_key_insight", "The key insight is that retrieval beats recall."),
    ("prose_set_env", "Set the `PASSWORD` environment variable before running the tests."),
    ("de_passwort_vergessen", "Passwort vergessen? Dann hier klicken."),
    ("de_passwort_abgelaufen", "Das Passwort ist abgelaufen und muss erneuert werden."),
    ("de_passwort_laenge", "Das Passwort muss mindestens 8 Zeichen lang sein."),
    ("de_kennwort_aendern", "Kennwort ändern: Einstellungen → Sicherheit."),
    ("zh_password_length", "密码长度至少8位"),
    ("zh_password_wrong", "密码错误，请重试。"),
    ("zh_enter_password", "请输入密码："),
    ("zh_password_empty", "密码为空时不能登录。"),
    ("zh_cryptography", "密码学是一门古老的学科。"),
    ("url_no_password", "See https://docs.acme.dev/guide?section=auth&lang=en#tokens"),
    ("url_user_only", "Clone from https://alice@git.acme.dev/team/repo.git"),
    ("url_port_and_email_query", "http://localhost:8080/?email=alice@example.com"),
    ("email", "Contact alice.smith+memdir@example.com about the secret santa list."),
    ("git_ssh_remote", "git@github.com:acme/memdir.git"),
    ("redis_no_password", "REDIS_URL=redis://localhost:6379/0"),
    ("postgres_template_password", "postgres://user:password@localhost:5432/app"),
    ("postgres_local_default", "postgres://postgres:postgres@localhost:5432/dev"),
    ("mongo_env_placeholders", "mongodb://${MONGO_USER}:${MONGO_PASS}@mongo:27017"),
    ("version_strings", "Requires Python 3.11.7, ruff v0.6.9 and numpy==2.1.0rc1."),
    ("file_paths", "private_key_path: ~/.ssh/id_ed25519\nsecret_file: /run/secrets/db_password"),
    ("etc_passwd", "/etc/passwd: root:x:0:0:root:/root:/bin/bash"),
    ("hex_colors", "Palette: #ff00aa, #1e90ff, #0b0c0d; accent-color: #C0FFEE"),
    ("long_words", "Donaudampfschifffahrtsgesellschaftskapitän met antidisestablishmentarianism."),
    ("max_tokens", "max_tokens: 4096\ntoken_limit: 128000\ntokens_used = 1532"),
    ("tokenizer_name", 'tokenizer: "bert-base-uncased"\ntokenizer_name = "cl100k_base"'),
    ("nlp_special_tokens", 'pad_token: "<pad>"\neos_token: "</s>"\nunk_token = "[UNK]"'),
    ("pagination_token", f'next_page_token: "{NEXT_PAGE}"'),
    ("password_policy", "password_min_length: 12\npassword_max_age_days: 90"),
    ("type_hints", "class User:\n    password: str\n    token: Optional[str] = None"),
    ("ts_interface", "interface Login {\n  username: string;\n  password: string;\n}"),
    ("bcrypt_hash", "hashed_password: $2b$12$" + tok("bcrypt", B64.replace("+", "."), 53)),
    (
        "k8s_secret_ref",
        "kind: Secret\nmetadata:\n  name: db-credentials\nsecret_name: db-credentials",
    ),
    ("publishable_key", "STRIPE_PUBLISHABLE_KEY=pk_live_" + tok("pk", ALNUM, 24)),
    ("yaml_key_value", "key: my-setting\nkeys:\n  - primary\n  - secondary"),
    ("boolean_flags", "auth: true\nsecret: false\npassword: required"),
    ("ansible_vault_tag", "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256"),
    ("command_substitution", "AWS_SECRET_ACCESS_KEY=$(aws configure get aws_secret_access_key)"),
    ("onepassword_reference", "DB_PASSWORD=op://Private/Postgres/password"),
    (
        "secrets_manager_arn",
        "secret_arn: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    ),
    ("basic_auth_template", "Authorization: Basic " + base64.b64encode(b"user:password").decode()),
    ("curl_env_credentials", 'curl -u "$USER:$TOKEN" https://api.acme.dev'),
    ("docker_uid_gid", "docker run -u 1000:1000 -v $PWD:/src alpine"),
    ("git_push_upstream", "git push -u origin main"),
    ("mysql_password_prompt", "mysql -u root -p app_db"),
    ("jwt_without_alg", f"cursor={NO_ALG_JWT}"),
    ("dotted_namespace", "using Microsoft.Extensions.DependencyInjection.Abstractions;"),
    ("ipv6", "Listen on [2001:db8::1]:8443 and fe80::1ff:fe23:4567:890a."),
    ("scikit_learn", "pip install scikit-learn; sk-learn is the wrong name."),
    ("placeholder_slack", "SLACK_BOT_TOKEN=xoxb-your-bot-token"),
    ("session_id_hex", f"session_id = {MD5}\ntrace_id: {SHA1[:32]}"),
    ("odbc_empty_password", "Server=db;Database=app;User Id=sa;Password=;"),
    ("markdown_tokens_link", "[Personal access tokens](https://github.com/settings/tokens)"),
    ("ssh_keygen_howto", "Run `ssh-keygen -t ed25519 -C you@example.com` to create a key pair."),
    ("k8s_secret_object_name", "volumes:\n  - name: creds\n    secret: db-credentials"),
    ("secret_santa", "Secret: the surprise party is on Friday."),
    ("phone_and_isbn", "Call +49 30 1234567; ISBN 978-3-16-148410-0."),
    ("prose_same_as_username", "The password is the same as the username, sadly."),
    ("prose_if_wrong", "If the password is wrong, the CLI exits with code 4."),
    ("prose_token_valid", "The token is valid for 24h and refreshed by the agent."),
    ("prose_secret_is", "The secret is to use smaller batches."),
    ("prose_password_see_vault", "Password: see the 1Password entry 'Prod DB'."),
    ("prose_password_min", "password = 8 characters minimum"),
    ("prose_password123_terrible", "password123 is a terrible password."),
    ("prose_api_key_stored", "API key: stored in 1Password (vault: Engineering)"),
    ("prose_set_my_password", "I set my password to something memorable yesterday."),
    ("de_passwort_siehe", "Passwort: siehe KeePass, Eintrag Server"),
    ("de_passwort_wie_benutzer", "Das Passwort lautet wie der Benutzername."),
    ("zh_password_required", "密码是必填项。"),
    ("zh_password_see_manager", "密码：见密码管理器"),
    ("json_null_password", '{"username": "app", "password": null, "token": ""}'),
    ("empty_env_password", "DB_USER=app\nDB_PASSWORD=\nDB_HOST=db"),
    ("secret_hash_field", f"secret_hash: {SHA256}"),
    ("python_type_annotation", "def login(username: str | None, password: SecretStr | None):"),
    ("tuple_unpacking", "username, password = credentials.split(':')\nuser, pw = pair"),
    ("chained_assignment", "userid = passwd = acct = ''"),
    ("reST_field", ":param password: (optional) the password to decrypt the key\n"),
    ("docs_url_example_host", "// Prints https://abc:123@example.com/"),
    ("cvs_pserver", "cvs -d :pserver:anoncvs@cvs.acme.dev:/cvs/src login"),
    ("f_string_reference", 'print(f"password={password!r}")'),
    ("verb_pass_backticks", "Pass `--full-trace` to see hidden frames; pass 'ignore' to skip."),
    ("regex_alternation", "r'case|continue|switch|pwd|true|false|CurrentPass|CurrentX|'"),
    ("reST_passphrase_description", ":param passphrase: The passphrase used to encrypt it."),
    ("ssh_passphrase_prompt", "Enter passphrase for key '/Users/<user>/.ssh/id_rsa':"),
    ("html_pass_to_code", 'to pass to <code class="literal">ninja -t targets</code>'),
    ("type_union_field", "password: HiddenText | None = None"),
    (
        "html_error_anchor",
        '<code>ERR_MISSING_PASSPHRASE</code><a href="#err_missing_passphrase" id="x">#</a>',
    ),
    (
        "md_table_header",
        "| field | type | notes |\n|---|---|---|\n| password | string | required |",
    ),
    ("passphrase_sentence", "passphrase: Use the one from the team vault."),
    ("prose_hyphenated", "The password is hard-coded in the app; the password is case-sensitive."),
    ("de_hyphenated", "Das Passwort ist E-Mail-basiert und wird täglich erneuert."),
    (
        "realistic_agent_note",
        "# Project: memdir retrieval\n"
        "The user's API key for staging lives in 1Password under 'Staging'.\n"
        "Token budget per answer: 800 tokens; max_tokens=800.\n"
        "Password hashing: argon2id with m=64MiB, t=3, p=4.\n"
        "Secrets are never stored in notes; store the env var name (OPENAI_API_KEY).\n"
        "Auth flow: OAuth2 PKCE; the access token is short-lived, the refresh token rotates.\n"
        "```yaml\nauth:\n  provider: github\n  client_id: Iv1.8a61f9b3a7aba766\n"
        "  client_secret: ${GITHUB_CLIENT_SECRET}\n```\n"
        "kubectl create secret generic db --from-literal=password=$DB_PASSWORD\n"
        "Der Schlüssel liegt im Tresor. Das Passwort steht im Passwortmanager.\n"
        "令牌过期时间为一小时。密钥存放在 KMS 中。\n"
        "secret_key_path: /etc/memdir/secret.key\n"
        "TOKEN_ENDPOINT=https://auth.acme.dev/oauth/token\n"
        "auth_method: client_secret_basic\n"
        "ssh_key_fingerprint: SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s\n"
        "Use `pass show work/db` to print the password.\n"
        "The key is: always test the migration on a copy.\n"
        "Token: n/a\nPassword: (none)\n"
        "Authorization header format: `Bearer <token>`.\n"
        "Stripe keys start with sk_live_ or sk_test_; GitHub PATs start with ghp_.\n",
    ),
]

NEGATIVES: tuple[Negative, ...] = tuple(Negative(*row) for row in _NEG)


def case_id(case: Positive | Negative) -> str:
    """The pytest id of a corpus case."""
    return case.id
