"""Beyond's one settings file, configured from the environment (docs/operations.md lists every variable).

The defaults are the embedded mode: SQLite in the project root, the in-memory channel layer and
the built-in offline engine, so `make run` works on a fresh machine with no key and no network.
"""
import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str = "False") -> bool:
    return os.getenv(name, default).strip().lower() in ("1", "true", "yes", "on")


def envint(name: str, default: int) -> int:
    return int(os.getenv(name, str(default)))


DEBUG = envbool("DJANGO_DEBUG", "False")
SECRET_KEY = os.getenv("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    # Embedded mode only: a fixed development key would let anyone forge sessions on a deployed
    # instance, so a missing key is derived per checkout and never reused across machines.
    key_file = BASE_DIR / ".secret_key"
    if not key_file.exists():
        import secrets

        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    SECRET_KEY = key_file.read_text().strip()
#: Earlier keys, comma-separated, still accepted after a key change (sessions, the signed periodic
#: checks of the record: docs/audit.md).
SECRET_KEY_FALLBACKS = [k for k in os.getenv("DJANGO_SECRET_KEY_FALLBACKS", "").split(",") if k]

ALLOWED_HOSTS = [h.strip() for h in os.getenv("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [h.strip() for h in os.getenv("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if h.strip()]

INSTALLED_APPS = [
    "daphne",  # must come first: it takes over runserver so websockets are served (daphne.E001)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "axes",
    "beyond_site.workspaces",
    "beyond_site.runs",
    "beyond_site.chat",
    "beyond_site.audit",
    "beyond_site.exports",
    "beyond_site.workspace_settings",
    "beyond_site.files",
    "beyond_site.accounts",
    "beyond_site.calibration",
    "ninja",  # its Swagger UI's files, served from this site (no CDN)
    "beyond_site.api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "beyond_site.api.middleware.ProblemMiddleware",  # every error under /api/ as problem+json
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "beyond_site.lib.inputs.NulGuardMiddleware",  # NUL characters: a 400, never a database error
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "beyond_site.lib.timezones.ViewerTimeZoneMiddleware",  # times shown in the viewer's zone
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "beyond_site.lib.busy.BusyMiddleware",
    "axes.middleware.AxesMiddleware",  # last: it turns a lockout into its response
]

ROOT_URLCONF = "beyond_site.urls"
ASGI_APPLICATION = "beyond_site.asgi.application"
WSGI_APPLICATION = None

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
            ],
        },
    },
]

DATABASES = {"default": dj_database_url.parse(os.getenv("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))}
_SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
#: A web process served by daphne, and a worker, build what they keep (templates, framework
#: packs...) as they start rather than in their first requests, then freeze it out of the
#: garbage collector's passes (beyond_site/runtime/warmup.py).
BEYOND_WARM_UP = envbool("BEYOND_WARM_UP", "True")
#: HTTP requests Django works on at once in a process; the others wait on the event loop
#: (beyond_site/runtime/admission.py). A request's work is mostly Python, which one process runs one
#: thread at a time: more threads only make every one of them, and the runs, wait longer. With
#: 100 submissions at once (bench/load.py) 8 did best: per-run wall p95 12 to 13 s on SQLite
#: against 14.5 s with 4 and 13.2 s with 16; unbounded, submissions were refused as busy.
BEYOND_HTTP_CONCURRENCY = envint("BEYOND_HTTP_CONCURRENCY", 8)
#: A live run page that has heard no doorbell for this long reads its run anyway (a doorbell can be
#: lost: the page must still see the run's end).
BEYOND_PAGE_RECHECK_S = float(os.getenv("BEYOND_PAGE_RECHECK_S", "15"))
if _SQLITE:
    # Several writers (the ASGI server's runner tasks, a worker, the CLI) share one file:
    # IMMEDIATE transactions and a busy timeout turn "database is locked" into a short wait.
    # Connections are kept (opening one per event cost more than the event's own write).
    DATABASES["default"].update(CONN_MAX_AGE=None, CONN_HEALTH_CHECKS=True)
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA busy_timeout = 5000; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A pool per process (psycopg 3): borrowing a connection costs microseconds, opening one
    # milliseconds. It opens connections only as they are needed: one per thread that reaches the
    # database (the runs' thread, the loop's executor threads for pages and checks, each request in
    # progress), so a burst of submissions needs room beside the runs' and the pages' threads. Keep every process's maximum together under
    # the server's max_connections (100 by default).
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": envint("BEYOND_DB_POOL_MIN", 2), "max_size": envint("BEYOND_DB_POOL_MAX", 40),
        "timeout": envint("BEYOND_DB_POOL_TIMEOUT_S", 10)}

REDIS_URL = os.getenv("REDIS_URL", "")
if REDIS_URL:
    # channels-redis waits for a websocket's next message with a 5 s blocking read; the redis
    # client's own read timeout (5 s by default) must be longer, or every websocket that hears
    # nothing for 5 s is closed with an error.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [
        {"address": REDIS_URL, "socket_timeout": 10, "socket_connect_timeout": 5, "socket_keepalive": True,
         # A burst of pages joining their runs' groups at once takes a connection each from this
         # pool: past the client's default of 100, the rest were refused outright.
         "max_connections": envint("BEYOND_REDIS_MAX_CONNECTIONS", 1000)}],
        # Messages waiting for a process's consumers, all of them together: channels-redis keeps one
        # list per process, and past its capacity (100 by default) it drops what is sent to the
        # process. Two hundred live pages in one process went past it and lost run ends.
        "capacity": envint("BEYOND_REDIS_CHANNEL_CAPACITY", 10_000)}}}
    # Shared by every web process: password-reset request counts must add up across them, and a
    # logout must end a session's cached copy everywhere (lib/session_keys.py).
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "beyond_site.runtime.channel_layer.InMemoryChannelLayer"}}
    # One process: its own memory is the cache every request shares. Room for every signed-in
    # session (lib/session_keys.py), where Django's default keeps 300 entries.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                          "OPTIONS": {"MAX_ENTRIES": 10_000}}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: a locked-out login is refused before the password check
    "django.contrib.auth.backends.ModelBackend",
]
# Password guessing, on the app's login and the admin's: ten failures for one username from one
# address lock that pair out for 15 minutes. The pair, not the username or the address alone, so
# an office behind one proxy is not locked out by one person's mistyped password.
AXES_FAILURE_LIMIT = 10
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client address comes from X-Forwarded-For only when the operator says how many proxies in
# front of Beyond set it (BEYOND_TRUSTED_PROXY_COUNT); otherwise anyone could forge it.
BEYOND_TRUSTED_PROXY_COUNT = envint("BEYOND_TRUSTED_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "beyond_site.lib.http.client_ip"

# Mail is used for password resets only. Without DJANGO_EMAIL_HOST the reset pages do not exist
# (an admin sets passwords with `manage.py changepassword`); with it, reset requests are
# throttled per client address and per address asked for (beyond_site/lib/accounts.py).
EMAIL_HOST = os.getenv("DJANGO_EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_PORT = envint("DJANGO_EMAIL_PORT", 587)
    EMAIL_HOST_USER = os.getenv("DJANGO_EMAIL_USER", "")
    EMAIL_HOST_PASSWORD = os.getenv("DJANGO_EMAIL_PASSWORD", "")
    EMAIL_USE_TLS = envbool("DJANGO_EMAIL_TLS", "True")
    DEFAULT_FROM_EMAIL = os.getenv("DJANGO_EMAIL_FROM", "beyond@localhost")
BEYOND_PASSWORD_RESETS_PER_HOUR = envint("BEYOND_PASSWORD_RESETS_PER_HOUR", 5)

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The product speaks English only. With translation machinery on, every date filter and form
# label asks the request's active language (a context-local lookup): a measurable share of the
# CPU a page costs under load (bench/README.md, "Throughput").
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve from the app folders too, so a server started without collectstatic (tests, a fresh
# checkout) still has its CSS and htmx; `make run` collects them anyway.
WHITENOISE_USE_FINDERS = True
# The originals of uploaded files, content-addressed on disk (workspaces/originals.py). Every
# process that reads files (web servers, and workers in the scaled mode) must see the same folder.
BEYOND_FILES_DIR = Path(os.getenv("BEYOND_FILES_DIR", BASE_DIR / "media" / "originals"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "originals": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                  "OPTIONS": {"location": BEYOND_FILES_DIR, "file_permissions_mode": 0o600,
                              "directory_permissions_mode": 0o700}},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's cached database sessions; a key outside the session alphabet is no session (a NUL in a
# cookie reached PostgreSQL).
SESSION_ENGINE = "beyond_site.lib.session_keys"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
SECURE_CONTENT_TYPE_NOSNIFF = True
if envbool("DJANGO_SECURE"):
    # Behind HTTPS (a TLS-terminating proxy that sets X-Forwarded-Proto): secure cookies, HSTS.
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = envint("DJANGO_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # Preloading binds the whole domain to HTTPS in every browser for months, and is undone slowly:
    # the domain's owner opts in (DJANGO_HSTS_PRELOAD=1); without it `check --deploy` stays quiet.
    SECURE_HSTS_PRELOAD = envbool("DJANGO_HSTS_PRELOAD")
    if not SECURE_HSTS_PRELOAD:
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
# No inline script or style anywhere: model text that slips past the sanitiser cannot run.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
DATA_UPLOAD_MAX_NUMBER_FILES = 10  # files per request; the chat upload view reports more as refused
# Uploaded files go to temporary files as they are parsed, never into memory (the request body
# itself is spooled to disk past FILE_UPLOAD_MAX_MEMORY_SIZE, which must stay above 0 for that).
FILE_UPLOAD_HANDLERS = ["beyond_site.lib.uploads.TemporaryFileHandler"]

# Beyond
BEYOND_PROVIDER = os.getenv("BEYOND_PROVIDER", "offline")
OPENROUTER_BASE_URL = os.getenv("OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1")
BEYOND_STEP_CONCURRENCY = envint("BEYOND_STEP_CONCURRENCY", 8)
BEYOND_MAX_FILE_BYTES = envint("BEYOND_MAX_FILE_BYTES", 20 * 1024 * 1024)
BEYOND_MAX_WORKSPACE_BYTES = envint("BEYOND_MAX_WORKSPACE_BYTES", 500 * 1024 * 1024)
#: Files read at once per process (each in a subprocess with its own limits, off every request),
#: and at most this many of one member's at once, so one member's batch never holds them all.
BEYOND_FILE_READERS = envint("BEYOND_FILE_READERS", 2)
BEYOND_FILE_READERS_PER_MEMBER = envint("BEYOND_FILE_READERS_PER_MEMBER", 1)
#: Word, PDF and Excel exports are written off the request (beyond_site/exports/jobs.py), this many
#: at once per process (one member's at a time, as files are read). A document over
#: BEYOND_EXPORT_MAX_CHARS is refused with the reason before any work (a 2.9 MB document took 223 s
#: of CPU as PDF); a file still being written after BEYOND_EXPORT_TIMEOUT_S is given up; a request
#: waits BEYOND_EXPORT_WAIT_S for its file, then says it is being prepared.
BEYOND_EXPORT_WRITERS = envint("BEYOND_EXPORT_WRITERS", 1)
BEYOND_EXPORT_MAX_CHARS = envint("BEYOND_EXPORT_MAX_CHARS", 1_000_000)
BEYOND_EXPORT_TIMEOUT_S = envint("BEYOND_EXPORT_TIMEOUT_S", 120)
BEYOND_EXPORT_WAIT_S = float(os.getenv("BEYOND_EXPORT_WAIT_S", "3"))
#: A run whose conversation or workspace has files still being read waits this long for them;
#: past it, it goes on without them and says so.
BEYOND_RUN_WAITS_FOR_FILES_S = envint("BEYOND_RUN_WAITS_FOR_FILES_S", 60)
#: The drafts a calibration report's figure must be measured on for a workspace's requirement to
#: count it (docs/calibration.md, "Trust status"): a rate over a handful of drafts says nothing.
BEYOND_CALIBRATION_MIN_DRAFTS = envint("BEYOND_CALIBRATION_MIN_DRAFTS", 30)
#: The bar a model verifier's latest report must meet for its passes to show as plain (green)
#: passes where a workspace requires no calibration of its own; below it, or never calibrated, a
#: model's pass reads "Passed · uncalibrated verifier" (or "· verifier below thresholds") in a
#: neutral colour (docs/calibration.md, "Trust at a glance"). Rates as fractions.
BEYOND_TRUSTED_VERIFIER = json.loads(os.getenv(
    "BEYOND_TRUSTED_VERIFIER", '{"max_clean_flagged": 0.2, "max_unparseable": 0.1, "min_caught": 0.5}'))
#: The largest request body taken from a signed-in user (the most files the upload view takes at
#: once, at the per-file limit, and room for the form), and from anyone else (a login form):
#: larger bodies are refused while they arrive (beyond_site/lib/bodies.py).
BEYOND_MAX_REQUEST_BYTES = envint("BEYOND_MAX_REQUEST_BYTES",
                                  DATA_UPLOAD_MAX_NUMBER_FILES * BEYOND_MAX_FILE_BYTES + 1024 * 1024)
BEYOND_MAX_ANONYMOUS_REQUEST_BYTES = envint("BEYOND_MAX_ANONYMOUS_REQUEST_BYTES", 64 * 1024)
BEYOND_CONTEXT_BUDGET_TOKENS = envint("BEYOND_CONTEXT_BUDGET_TOKENS", 100_000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # A 403 is one line with its reason, not a traceback (beyond_site/lib/logs.py).
    # No token of an invitation, a password reset or the API in any line (beyond_site/lib/logs.py).
    "filters": {"one_line_403": {"()": "beyond_site.lib.logs.OneLineForbidden"},
                "no_secrets": {"()": "beyond_site.lib.logs.NoSecretsInPaths"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["no_secrets"]}},
    "root": {"handlers": ["stderr"], "level": os.getenv("BEYOND_LOG_LEVEL", "WARNING")},
    "loggers": {"beyond": {"level": os.getenv("BEYOND_LOG_LEVEL", "INFO"), "propagate": True},
                "django.request": {"filters": ["one_line_403"]}},
}
# Where runs execute (docs/operations.md): in the web server (the embedded default), or, with
# BEYOND_RUN_IN_PROCESS off, in `beyond_worker` processes fed by the job engine (procrastinate),
# which lives in PostgreSQL: its app, tables and migrations exist only on a PostgreSQL database.
BEYOND_RUN_IN_PROCESS = envbool("BEYOND_RUN_IN_PROCESS", "True")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    INSTALLED_APPS.append("procrastinate.contrib.django")
elif not BEYOND_RUN_IN_PROCESS:
    raise ImproperlyConfigured("BEYOND_RUN_IN_PROCESS=false (the scaled mode) needs DATABASE_URL on PostgreSQL")
#: Requests a minute one API token may make (docs/api.md, "Limits"); beyond it, 429 with Retry-After.
BEYOND_API_RATE = os.environ.get("BEYOND_API_RATE", "240/min")

# The runtime comes last: as it is ready it loads every app's background tasks (`tasks.py`),
# which register with the job engine when the engine's app is installed.
INSTALLED_APPS.append("beyond_site.runtime")
#: Runners outside the job engine (the embedded server, `beyond_run`) hold a run by a lease they
#: renew every BEYOND_RUN_HEARTBEAT_S; a run whose lease ran out is failed as interrupted.
BEYOND_RUN_LEASE_S = envint("BEYOND_RUN_LEASE_S", 90)
BEYOND_RUN_HEARTBEAT_S = envint("BEYOND_RUN_HEARTBEAT_S", 20)
#: Scaled mode: each worker records a heartbeat every BEYOND_WORKER_HEARTBEAT_S; one silent for
#: BEYOND_WORKER_STALLED_S is dead, and the reaper (every BEYOND_REAP_EVERY_S, a divisor of 60)
#: fails its runs as interrupted.
BEYOND_WORKER_HEARTBEAT_S = envint("BEYOND_WORKER_HEARTBEAT_S", 5)
BEYOND_WORKER_STALLED_S = envint("BEYOND_WORKER_STALLED_S", 20)
BEYOND_REAP_EVERY_S = envint("BEYOND_REAP_EVERY_S", 5)
#: How often the whole record is verified in the background (runs/chain.py; docs/audit.md,
#: "Tamper evidence"): a failure is shown to the workspace's admins and auditors.
BEYOND_CHAIN_CHECK_EVERY_S = envint("BEYOND_CHAIN_CHECK_EVERY_S", 6 * 3600)
PROCRASTINATE_WORKER_DEFAULTS = {"update_heartbeat_interval": BEYOND_WORKER_HEARTBEAT_S,
                                 "stalled_worker_timeout": BEYOND_WORKER_STALLED_S,
                                 "delete_jobs": "successful"}
#: Endpoints on this machine or its private network that workspace admins may point a role at
#: (comma-separated base URLs, e.g. a local Ollama); any public https endpoint is allowed anyway.
BEYOND_ALLOWED_BASE_URLS = os.getenv("BEYOND_ALLOWED_BASE_URLS", "")
#: The variables read when they are used rather than here: the model providers' keys and base URLs
#: (OPENROUTER_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL, BEYOND_PROVIDER...), the search backend
#: and its keys (BEYOND_SEARCH...), the fetch policy and `beyond_demo`'s PORT and password. The
#: site reads them through this setting, never `os.environ` itself, so settings stay the one door;
#: it is the live environment, so a variable set later (a test's, an operator's shell) is seen.
BEYOND_ENVIRONMENT = os.environ
