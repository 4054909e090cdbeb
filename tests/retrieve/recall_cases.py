"""A labelled recall set: a fixture store of realistic notes and (message, expected note) pairs.

English, German and Chinese notes and messages; `None` means the message must recall
nothing (small talk, unrelated tasks, messages that share only common words with a note).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["CASES", "NOTES", "PRIVATE_ID", "SUPERSEDED_ID", "FixtureNote", "remember_all"]


@dataclass(frozen=True)
class FixtureNote:
    id: str
    summary: str
    type: str
    tags: tuple[str, ...]
    body: str
    supersedes: tuple[str, ...] = ()
    private: bool = False


SUPERSEDED_ID = "postgres-14"
PRIVATE_ID = "shipping-address"

# Written in this order (later notes are more recently updated).
NOTES: tuple[FixtureNote, ...] = (
    FixtureNote(
        SUPERSEDED_ID,
        "Production database is PostgreSQL 14",
        "project",
        ("postgres", "database"),
        "We run PostgreSQL 14 on the managed cluster.",
    ),
    FixtureNote(
        "postgres-16",
        "Production database is PostgreSQL 16; do not use features from 17",
        "project",
        ("postgres", "postgresql", "database", "datenbank", "数据库"),
        "The managed cluster was upgraded in March.\n\n**Why:** the provider offers 17 only "
        "next year.\n\n**How to apply:** check the release notes before using a new SQL "
        "feature. Schema changes go through [[alembic-migrations]].",
        supersedes=(SUPERSEDED_ID,),
    ),
    FixtureNote(
        "alembic-migrations",
        "Database migrations use Alembic; never edit a migration that was already applied",
        "project",
        ("alembic", "migration", "migrationen", "schema", "迁移"),
        "Create a new revision with `alembic revision --autogenerate` and review it by "
        "hand. Editing an applied revision breaks every existing environment.",
    ),
    FixtureNote(
        "pnpm-not-npm",
        "Use pnpm, not npm, for the web frontend",
        "feedback",
        ("pnpm", "npm", "package-manager", "paketmanager"),
        "The lockfile is pnpm-lock.yaml; `npm install` rewrites dependencies and breaks CI.",
    ),
    FixtureNote(
        "senior-backend-new-to-react",
        "User is a senior backend engineer and new to React",
        "user",
        ("role", "react", "frontend", "experience"),
        "Explain React idioms when they come up; skip the basics of Python and SQL.",
    ),
    FixtureNote(
        "short-answers",
        "User prefers short answers without a summary at the end",
        "user",
        ("style", "answers", "antworten", "brevity"),
        "Lead with the result. No recap paragraph after a code change.",
    ),
    FixtureNote(
        "commit-messages-english",
        "Commit messages are written in English, imperative mood, under 72 characters",
        "feedback",
        ("git", "commit", "commit-message"),
        "Example: `Fix rounding of net prices`. The changelog is generated from them.",
    ),
    FixtureNote(
        "pytest-parallel",
        "Run the test suite with pytest -n auto; a serial run takes 20 minutes",
        "project",
        ("tests", "pytest", "testing", "xdist"),
        "The integration tests need the docker services up (see [[docker-compose-dev]]).",
    ),
    FixtureNote(
        "grafana-latency",
        "Latency dashboards live in Grafana under 'API / Latency'",
        "reference",
        ("grafana", "dashboard", "monitoring", "latency", "latenz", "überwachung"),
        "p95 and p99 per endpoint; alerts fire in #ops-alerts.",
    ),
    FixtureNote(
        "linear-bugs",
        "Bugs are tracked in Linear, project BACKEND, not in GitHub issues",
        "reference",
        ("linear", "bugs", "tickets", "issues", "fehler"),
        "Label a bug with the affected service; the on-call engineer triages every morning.",
    ),
    FixtureNote(
        "rechnungen-weasyprint",
        "Rechnungen werden als PDF mit WeasyPrint erzeugt, nicht mit wkhtmltopdf",
        "project",
        ("rechnung", "invoice", "pdf", "weasyprint"),
        "wkhtmltopdf wird nicht mehr gepflegt und bricht bei Umlauten in Kopfzeilen.\n\n"
        "**Warum:** Schriftarten lassen sich mit WeasyPrint sauber einbetten.",
    ),
    FixtureNote(
        "preise-brutto",
        "Der Kunde möchte alle Preise brutto inklusive Mehrwertsteuer angezeigt bekommen",
        "project",
        ("preise", "mehrwertsteuer", "vat", "prices", "brutto"),
        "Gilt für Shop und Rechnungsvorschau. Netto-Preise nur im Admin-Bereich.",
    ),
    FixtureNote(
        "buchhaltung-deutsch",
        "Antworten zu Buchhaltung und Steuern auf Deutsch formulieren",
        "user",
        ("sprache", "language", "buchhaltung", "accounting", "deutsch"),
        "Fachbegriffe (Vorsteuer, Umsatzsteuervoranmeldung) nicht übersetzen.",
    ),
    FixtureNote(
        "keine-db-mocks",
        "Keine Mocks für die Datenbank in Integrationstests, echte Testdatenbank verwenden",
        "feedback",
        ("mocks", "integrationstest", "integration-tests", "datenbank", "database"),
        "Letztes Quartal liefen gemockte Tests grün, während die Migration in Produktion "
        "fehlschlug. Siehe [[alembic-migrations]].",
    ),
    FixtureNote(
        "zahlungs-api-doku",
        "Die API-Dokumentation der Zahlungsanbieter liegt im Confluence-Bereich PAY",
        "reference",
        ("zahlung", "payment", "confluence", "dokumentation", "docs"),
        "Stripe und Adyen haben je eine eigene Seite mit Testkarten und Webhook-Beispielen.",
    ),
    FixtureNote(
        "tailwind-only",
        "前端使用 Tailwind CSS，不要引入新的 CSS 框架",
        "feedback",
        ("前端", "frontend", "css", "tailwind", "样式"),
        "之前同时用了 Bootstrap 和 Tailwind，打包体积翻倍。新组件只用 Tailwind 的工具类。",
    ),
    FixtureNote(
        "deploy-staging",
        "部署流程：合并到 main 后由 GitHub Actions 自动发布到预发布环境",
        "project",
        ("部署", "deploy", "deployment", "发布", "staging"),
        "生产环境需要在 Actions 页面手动批准。不要在本地直接部署。",
    ),
    FixtureNote(
        "pm-no-jargon",
        "用户是产品经理，不写代码，解释时少用术语",
        "user",
        ("角色", "role", "产品经理"),
        "先讲结论和影响，再讲实现细节。",
    ),
    FixtureNote(
        "structured-logging",
        "日志统一用结构化 JSON 格式，字段名使用 snake_case",
        "project",
        ("日志", "logging", "json", "格式"),
        "不要拼接字符串日志；请求 ID 放在 request_id 字段。",
    ),
    FixtureNote(
        "figma-mobile",
        "设计稿在 Figma 的「移动端 2.0」文件里",
        "reference",
        ("设计", "design", "figma", "设计稿", "mobile"),
        "桌面端的设计还在旧文件「Web 1.x」。",
    ),
    FixtureNote(
        "weekly-report",
        "周报每周五下午发给张经理",
        "reference",
        ("周报", "weekly-report", "report"),
        "用公司模板，包含本周完成和下周计划。",
    ),
    FixtureNote(
        "api-rate-limit",
        "Public API rate limit is 100 requests per minute per token",
        "project",
        ("api", "rate-limit", "throttling"),
        "Above it the gateway answers 429 with a Retry-After header.",
    ),
    FixtureNote(
        "timestamps-utc",
        "Store all timestamps in UTC; convert to local time only in the UI",
        "project",
        ("timezone", "utc", "zeitzone", "时区"),
        "Database columns are timestamptz. The browser converts for display.",
    ),
    FixtureNote(
        "launchdarkly-flags",
        "Feature flags are managed in LaunchDarkly, not in config files",
        "reference",
        ("feature-flags", "launchdarkly", "toggles"),
        "Remove a flag within two sprints after full rollout.",
    ),
    FixtureNote(
        "reports-raw-sql",
        "The reports module uses raw SQL, not the ORM, for performance",
        "project",
        ("sql", "orm", "reports", "performance"),
        "The ORM produced N+1 queries on the monthly sales report. Keep queries in "
        "reports/queries/*.sql.",
    ),
    FixtureNote(
        "small-pull-requests",
        "Keep pull requests under 400 changed lines for code review",
        "feedback",
        ("pull-request", "review", "code-review"),
        "Split refactoring and behaviour changes into separate pull requests.",
    ),
    FixtureNote(
        "docker-compose-dev",
        "Local development runs in Docker Compose; `make up` starts every service",
        "project",
        ("docker", "compose", "setup", "entwicklung", "entwicklungsumgebung"),
        "Postgres, Redis and the mail catcher start together; `make down` stops them.",
    ),
    FixtureNote(
        PRIVATE_ID,
        "Shipping address used for the delivery tests",
        "user",
        ("address", "shipping", "delivery"),
        "Only for the checkout tests on staging.",
        private=True,
    ),
)

#: (message, expected note id or None for "recall nothing").
CASES: tuple[tuple[str, str | None], ...] = (
    # -- English, should recall
    ("Should I install the new dependency with npm?", "pnpm-not-npm"),
    ("Can I use the JSON_TABLE function that landed in PostgreSQL 17?", "postgres-16"),
    ("How do I make the pytest run finish faster?", "pytest-parallel"),
    ("Where can I find the latency dashboard for the API?", "grafana-latency"),
    ("I found a bug in the login flow, should I open a GitHub issue?", "linear-bugs"),
    ("What is the rate limit of the public API?", "api-rate-limit"),
    ("Should this timestamp be stored in local time or in UTC?", "timestamps-utc"),
    ("Add a feature flag for the new checkout page", "launchdarkly-flags"),
    ("Write the monthly sales report query with the ORM", "reports-raw-sql"),
    ("Is a pull request with 900 changed lines too big for review?", "small-pull-requests"),
    ("How do I start the local development services?", "docker-compose-dev"),
    (
        "I need a new migration to add a column; can I just edit the last Alembic file?",
        "alembic-migrations",
    ),
    ("What should the commit message for this change look like?", "commit-messages-english"),
    ("Keep your answers short, no summary at the end please", "short-answers"),
    ("Where is the Figma file for the mobile design?", "figma-mobile"),
    # -- German, should recall
    ("Wie erzeugen wir die Rechnung als PDF?", "rechnungen-weasyprint"),
    ("Sollen die Preise mit oder ohne Mehrwertsteuer angezeigt werden?", "preise-brutto"),
    ("Kann ich im Integrationstest die Datenbank einfach mocken?", "keine-db-mocks"),
    ("Wo finde ich die Dokumentation zur Zahlung mit Stripe?", "zahlungs-api-doku"),
    ("Welche Postgres-Version läuft bei uns in Produktion?", "postgres-16"),
    ("Wie starte ich die Entwicklungsumgebung mit Docker?", "docker-compose-dev"),
    ("Welches Dashboard zeigt die Latenz der Endpunkte?", "grafana-latency"),
    ("Ich brauche eine neue Migration für die Alembic-Revision", "alembic-migrations"),
    ("Erklär mir die Buchhaltung der Umsatzsteuer bitte auf Deutsch", "buchhaltung-deutsch"),
    ("Wie ist das Rate-Limit der öffentlichen API?", "api-rate-limit"),
    ("npm oder pnpm für das Frontend?", "pnpm-not-npm"),
    # -- Chinese, should recall
    ("前端样式可以引入 Bootstrap 吗？", "tailwind-only"),
    ("代码合并以后怎么部署到预发布环境？", "deploy-staging"),
    ("日志应该用什么格式？", "structured-logging"),
    ("移动端的设计稿在哪里？", "figma-mobile"),
    ("给产品经理解释一下这个接口的改动", "pm-no-jargon"),
    ("周报要发给谁？", "weekly-report"),
    ("我们生产环境的数据库是 PostgreSQL 几？", "postgres-16"),
    ("数据库迁移用什么工具？", "alembic-migrations"),
    # -- should recall nothing
    ("Hi, how are you today?", None),
    ("Thanks, that looks good!", None),
    ("Can you explain what a monad is?", None),
    ("Write a haiku about autumn leaves.", None),
    ("Translate 'good morning' into French.", None),
    ("Please rename this variable to something clearer.", None),
    ("Let's use a new approach here.", None),
    ("Can you run this script once more?", None),
    ("What time is the meeting tomorrow?", None),
    ("Add a test for the date parser.", None),
    ("The answer is somewhere in the docs.", None),
    ("Fix the typo in the README heading.", None),
    ("Danke, das passt so.", None),
    ("Kannst du mir ein Rezept für Apfelkuchen geben?", None),
    ("Die Preise für Flüge nach Berlin sind gestiegen.", None),
    ("Schreib bitte eine kurze E-Mail an das Team.", None),
    ("Welche Python-Version nutzen wir im Skript?", None),
    ("你好，今天天气怎么样？", None),
    ("帮我写一首关于秋天的诗", None),
    ("谢谢，这样就可以了", None),
    ("我们下周五开会讨论这个问题", None),
    ("这个函数的名字不太好，换一个", None),
)


def remember_all(memory: Memory) -> None:
    """Write every fixture note through `memory`, in order."""
    for note in NOTES:
        memory.remember(
            note.summary,
            note.body,
            type=note.type,
            tags=note.tags,
            id=note.id,
            supersedes=note.supersedes or None,
            private=note.private or None,
        )
