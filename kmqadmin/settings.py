"""Django settings, read from the environment (see docs/configuration.md and docs/processes.md).

KAFKA_BOOTSTRAP_SERVERS, DATABASE_URL, REDIS_URL and SPARK_MASTER each fall
back to an embedded default when unset, so `make run` needs no servers.
"""

from datetime import timedelta
from pathlib import Path

from django.utils.csp import CSP

from kmqadmin import env as config

env = config.env

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env.str("KMQ_DATA_DIR", default=str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = config.secret_key(env.str("DJANGO_SECRET_KEY", default=""), DATA_DIR)
KMQ_SQS_ENCRYPTION_KEY = config.sqs_encryption_key(
    env.str("KMQ_SQS_ENCRYPTION_KEY", default=""), DATA_DIR
)
# The SQS endpoint: the account id in its queue URLs and ARNs, the only
# region a signature may be scoped to (unset: any), and the cluster whose
# queues it serves (unset: the only one registered).
KMQ_SQS_ACCOUNT_ID = env.str("KMQ_SQS_ACCOUNT_ID", default="000000000000")
KMQ_SQS_REGION = env.str("KMQ_SQS_REGION", default="") or None
KMQ_SQS_CLUSTER = env.str("KMQ_SQS_CLUSTER", default="")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# --- web safety (docs/production.md) ---------------------------------------
# Safe by default once DEBUG is off. Browsers keep Secure cookies on
# http://localhost and 127.0.0.1, so `make run` works with them; the TLS
# redirect and the proxy header depend on the deployment, hence switches.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_HSTS_PRELOAD", default=False)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SSL_REDIRECT", default=False)
# Health checks and Prometheus probe the process itself over plain http
# (docker-compose.yml).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https")
    if env.bool("DJANGO_BEHIND_TLS_PROXY", default=False)
    else None
)
# An idle session ends: every request pushes the expiry back.
SESSION_COOKIE_AGE = env.int("DJANGO_SESSION_IDLE_S", 3600)
SESSION_SAVE_EVERY_REQUEST = True
# Nothing inline runs: scripts and styles come from static files; Django's
# admin and the API docs mark their few inline styles with the request nonce.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Login throttling (django-axes): a username is locked for this address
# after so many failures in a row, until the cool-off has passed.
AXES_FAILURE_LIMIT = env.int("KMQ_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(seconds=env.int("KMQ_LOGIN_LOCKOUT_S", 900))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# --- single sign-on with OpenID Connect (console/oidc/, docs/configuration.md)
# Unset issuer: passwords only. Set: "Sign in with <provider>" on the login
# page, and the API takes the provider's access tokens as bearer tokens.
KMQ_OIDC_ISSUER = env.str("KMQ_OIDC_ISSUER", default="").rstrip("/")
KMQ_OIDC_CLIENT_ID, KMQ_OIDC_CLIENT_SECRET = config.sso_client(
    KMQ_OIDC_ISSUER,
    env.str("KMQ_OIDC_CLIENT_ID", default=""),
    env.str("KMQ_OIDC_CLIENT_SECRET", default=""),
)
KMQ_OIDC_PROVIDER_NAME = env.str("KMQ_OIDC_PROVIDER_NAME", default="single sign-on")
KMQ_OIDC_GROUPS_CLAIM = env.str("KMQ_OIDC_GROUPS_CLAIM", default="groups")
KMQ_OIDC_ROLE_GROUPS = config.sso_role_groups(
    env.str("KMQ_OIDC_ROLE_GROUPS", default=config.DEFAULT_SSO_ROLE_GROUPS)
)
# The aud an access token must carry to be taken by the API.
KMQ_OIDC_AUDIENCE = env.str("KMQ_OIDC_AUDIENCE", default="") or KMQ_OIDC_CLIENT_ID
# An SSO session ends this long after its sign-in, busy or not: roles
# removed at the provider are gone here by then.
KMQ_OIDC_SESSION_S = env.int("KMQ_OIDC_SESSION_S", 3600)
KMQ_LOCAL_LOGIN = config.local_login(env.str("KMQ_LOCAL_LOGIN", default="on"), KMQ_OIDC_ISSUER)
# mozilla-django-oidc's own settings; its endpoints come from the issuer's
# discovery document (console/oidc/provider.py), not from settings.
OIDC_RP_SIGN_ALGO = env.str("KMQ_OIDC_SIGN_ALGO", default="RS256")
OIDC_RP_SCOPES = "openid email profile"
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 5
# Kept in the session for the provider's end-session call at logout (views/login.py).
OIDC_STORE_ID_TOKEN = True
if KMQ_OIDC_ISSUER:
    AUTHENTICATION_BACKENDS.append("kmqadmin.console.oidc.backend.SsoBackend")
    # The logout form's POST is answered with a redirect to the provider's
    # end-session endpoint, which browsers hold to form-action too.
    SECURE_CSP["form-action"].append(config.origin(KMQ_OIDC_ISSUER))

# --- the four external parts ---------------------------------------------
KMQ_EMBEDDED_KAFKA_PORT = env.int("KMQ_EMBEDDED_KAFKA_PORT", config.DEFAULT_EMBEDDED_KAFKA_PORT)
KAFKA_BOOTSTRAP_SERVERS, KAFKA_EMBEDDED = config.kafka_bootstrap_servers(
    env.str("KAFKA_BOOTSTRAP_SERVERS", default=""), KMQ_EMBEDDED_KAFKA_PORT
)
DATABASES = {"default": config.database(env.str("DATABASE_URL", default=""), DATA_DIR)}
REDIS_URL = env.str("REDIS_URL", default="")
CHANNEL_LAYERS = config.channel_layers(REDIS_URL)
CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT_OPTIONS = config.celery_transport(REDIS_URL, DATA_DIR)
SPARK_MASTER = env.str("SPARK_MASTER", default="local[*]")

CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_TRACK_STARTED = True
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# --- analytics (PySpark) --------------------------------------------------
# Which Kafka source the pipeline reads with: spark (spark-sql-kafka on the
# classpath), python (kmqadmin's data source) or auto (spark when there).
KMQ_PIPELINE_SOURCE = env.str("KMQ_PIPELINE_SOURCE", default="auto")
KMQ_ANALYTICS_DIR = Path(env.str("KMQ_ANALYTICS_DIR", default=str(DATA_DIR / "analytics")))
# How long before a window its messages may have been produced and still be
# counted when acked in it.
KMQ_ANALYTICS_LOOKBACK_S = env.int("KMQ_ANALYTICS_LOOKBACK_S", 3600)
# Beat runs `kmq analytics --since KMQ_ANALYTICS_WINDOW_S` this often (0: never).
KMQ_ANALYTICS_EVERY_S = env.int("KMQ_ANALYTICS_EVERY_S", 300)
KMQ_ANALYTICS_WINDOW_S = env.int("KMQ_ANALYTICS_WINDOW_S", 3600)
# Beat checks every enabled alert rule this often (0: never).
KMQ_ALERTS_EVERY_S = env.int("KMQ_ALERTS_EVERY_S", 60)
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    name: entry
    for name, entry, every in [
        (
            "analytics",
            {
                "task": "kmqadmin.workers.tasks.analytics",
                "schedule": float(KMQ_ANALYTICS_EVERY_S),
                "args": (KMQ_ANALYTICS_WINDOW_S,),
            },
            KMQ_ANALYTICS_EVERY_S,
        ),
        (
            "alerts",
            {
                "task": "kmqadmin.workers.tasks.alerts",
                "schedule": float(KMQ_ALERTS_EVERY_S),
                # A check still queued when the next is due is dropped, not run late.
                "options": {"expires": float(KMQ_ALERTS_EVERY_S)},
            },
            KMQ_ALERTS_EVERY_S,
        ),
    ]
    if every
}
# Alert emails (console/services/alerts/): EMAIL_URL, as smtp+tls://user:password@host:587
# (django-environ's form; consolemail:// prints them on the worker's log).
# Unset, there is no mailer: a rule's emails fail, saying to set it.
if EMAIL_URL := env.str("EMAIL_URL", default=""):
    MAILERS = config.mailers(EMAIL_URL)
DEFAULT_FROM_EMAIL = env.str("KMQ_ALERTS_FROM", default="kmqadmin@localhost")
EMAIL_SUBJECT_PREFIX = "[kmqadmin] "
# The largest message the console and the API accept (bytes).
KMQ_MAX_PAYLOAD_BYTES = env.int("KMQ_MAX_PAYLOAD_BYTES", 1_048_576)
# The largest request body read at all: a payload in base64 plus headers.
KMQ_MAX_REQUEST_BYTES = env.int("KMQ_MAX_REQUEST_BYTES", 2 * KMQ_MAX_PAYLOAD_BYTES)
# How often each worker re-reads the registered queues and schedules topics.
KMQ_SERVICES_REFRESH_S = env.float("KMQ_SERVICES_REFRESH_S", 30.0)
# Prometheus: each worker's metrics port (0: none; workers/metrics_port.py),
# and the bearer token that opens the web's /metrics beyond loopback and
# logged-in users (console/views/metrics.py).
KMQ_WORKER_METRICS_PORT = env.int("KMQ_WORKER_METRICS_PORT", 9808)
KMQ_WORKER_METRICS_ADDR = env.str("KMQ_WORKER_METRICS_ADDR", default="127.0.0.1")
KMQ_METRICS_TOKEN = env.str("KMQ_METRICS_TOKEN", default="")

INSTALLED_APPS = [
    "kmqadmin.console.apps.AuditedAdminConfig",  # django.contrib.admin, audited
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "django_celery_results",
    "kmqadmin.console",
    "kmqadmin.api",
    "axes",
]

MIDDLEWARE = [
    "kmqadmin.console.metrics.http.CountRequests",
    "django.middleware.security.SecurityMiddleware",
    "kmqadmin.console.body_limit.BodyLimitMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "kmqadmin.console.middleware.KafkaErrorMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "kmqadmin.urls"
ASGI_APPLICATION = "kmqadmin.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "console:index"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
SERVESTATIC_USE_FINDERS = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REST_FRAMEWORK = {
    # Token first: an anonymous caller gets 401 with WWW-Authenticate, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        # An identity provider's access token, when KMQ_OIDC_ISSUER is set.
        "kmqadmin.console.oidc.bearer.BearerAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["kmqadmin.api.permissions.HasRole"],
    "EXCEPTION_HANDLER": "kmqadmin.api.errors.exception_handler",
    # JSON only: no client of the API sends forms, and one parser is one
    # surface to harden (see api/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["kmqadmin.api.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Answers are ASCII JSON: an error may quote what the caller sent (DRF keys
    # a dict field's errors by the caller's key), and a lone surrogate written
    # raw cannot be encoded, so the answer would be a 500 instead of the 400.
    "UNICODE_JSON": False,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "kmqadmin API",
    "DESCRIPTION": "Per-message ack, redelivery, DLQ and schedules over Apache Kafka.",
    "VERSION": "0.1.0",
    "PREPROCESSING_HOOKS": ["kmqadmin.api.versions.current_only"],
    # Payloads sent are text, JSON or base64; payloads shown are text or
    # base64, or hex (a record whose headers do not decode): two choice
    # sets, two names.
    "ENUM_NAME_OVERRIDES": {
        "PayloadEncodingEnum": ["utf-8", "json", "base64"],
        "ShownEncodingEnum": ["utf-8", "base64", "hex"],
        # A browsed record's key, value and header values.
        "BytesEncodingEnum": ["utf-8", "base64"],
        # Two fields named kind: a group's, an alert event's.
        "GroupKindEnum": ["consumer", "share"],
        "AlertKindEnum": "kmqadmin.console.models.AlertEvent.Kind",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # axes says hello on every start and logs each login at INFO; its lockouts
    # are warnings, and logins and failed logins are in the audit log.
    # kafka-python (share-group admin calls) logs every connection at INFO.
    "loggers": {"axes": {"level": "WARNING"}, "kafka": {"level": "WARNING"}},
}
SPECTACULAR_SETTINGS |= {
    "SWAGGER_UI_DIST": f"/{STATIC_URL}vendor/swagger-ui",
    "SWAGGER_UI_FAVICON_HREF": f"/{STATIC_URL}favicon.svg",
}
