"""English labelled tidy-up set (issue 27), written blind before tuning."""

from __future__ import annotations

from tests.tidy.sets import Pair, Topic

PAIRS: list[Pair] = [
    # ------------------------------------------------------------------ contradicting
    Pair(
        id="en-c-backup-time",
        lang="en",
        kind="clock",
        contradicts=True,
        a=(
            "Nightly backup at 02:00",
            "The Postgres backup job runs every night at 2:00 UTC and keeps its dumps "
            "in the backups bucket.",
        ),
        b=(
            "DB snapshot kicks off at three",
            "Our database dump starts at 3 am UTC each night, so don't schedule "
            "heavy migrations around then.",
        ),
    ),
    Pair(
        id="en-c-standup-time",
        lang="en",
        kind="clock",
        contradicts=True,
        a=(
            "Daily standup at half past nine",
            "The backend team syncs every morning at 9:30 on the usual Meet link.",
        ),
        b=(
            "Morning check-in is at 10 sharp",
            "Everyone joins the video call at ten for the daily round; keep your "
            "update under a minute.",
        ),
    ),
    Pair(
        id="en-c-log-retention",
        lang="en",
        kind="retention",
        contradicts=True,
        a=(
            "Application logs kept for 30 days",
            "Loki keeps application logs for 30 days before they are deleted.",
        ),
        b=(
            "Log retention is two weeks",
            "We only hold on to service logs for a fortnight; anything older is "
            "gone, so export what you need for a postmortem.",
        ),
    ),
    Pair(
        id="en-c-api-rate-limit",
        lang="en",
        kind="limit",
        contradicts=True,
        a=(
            "Public API quota: 1000 calls per hour",
            "Each API token may make at most 1,000 requests an hour; the counter "
            "resets on the hour.",
        ),
        b=(
            "Clients throttled past 100 req/min",
            "External callers start getting HTTP 429 once they exceed a hundred "
            "requests in a minute.",
        ),
    ),
    Pair(
        id="en-c-python-version",
        lang="en",
        kind="version",
        contradicts=True,
        a=(
            "Services run on Python 3.11",
            "All backend services are built and tested against Python 3.11.",
        ),
        b=(
            "Base image ships 3.12",
            "The Docker base image we build every microservice from has Python 3.12 "
            "as its interpreter.",
        ),
    ),
    Pair(
        id="en-c-payments-oncall",
        lang="en",
        kind="name",
        contradicts=True,
        a=(
            "Billing team owns payments on-call",
            "Pages for the payments service go to the Billing team's rotation.",
        ),
        b=(
            "Platform carries the pager for checkout incidents",
            "When the payment service breaks at night, it's the platform squad who gets woken up.",
        ),
    ),
    Pair(
        id="en-c-prod-region",
        lang="en",
        kind="name",
        contradicts=True,
        a=(
            "Production lives in eu-west-1",
            "Our production AWS account runs everything in Ireland, eu-west-1.",
        ),
        b=(
            "Prod cluster is hosted in Frankfurt",
            "The live environment sits in eu-central-1; keep latency-sensitive "
            "resources there too.",
        ),
    ),
    Pair(
        id="en-c-deploy-weekday",
        lang="en",
        kind="weekday",
        contradicts=True,
        a=(
            "Production deploys go out on Tuesdays",
            "We release the web app to production every Tuesday after the morning QA pass.",
        ),
        b=(
            "Prod rollout is Wednesday afternoon",
            "The weekly ship to live happens midweek, Wednesday after lunch.",
        ),
    ),
    Pair(
        id="en-c-review-approvals",
        lang="en",
        kind="count",
        contradicts=True,
        a=(
            "Merges need two approvals",
            "A pull request can only be merged after two reviewers have approved it.",
        ),
        b=(
            "One sign-off is enough to land a PR",
            "A single reviewer's OK is all it takes to get code into main.",
        ),
    ),
    Pair(
        id="en-c-ci-timeout",
        lang="en",
        kind="duration",
        contradicts=True,
        a=(
            "CI jobs time out after 45 minutes",
            "GitHub Actions jobs are cancelled if they run longer than 45 minutes.",
        ),
        b=(
            "Builds get killed at the one-hour mark",
            "The pipeline aborts any build still running after an hour.",
        ),
    ),
    Pair(
        id="en-c-staging-reset",
        lang="en",
        kind="yesno",
        contradicts=True,
        a=(
            "Staging database is reset every Sunday",
            "A cron job restores staging from a sanitized prod snapshot every Sunday night.",
        ),
        b=(
            "We never wipe staging data",
            "QA depends on the history in the staging DB, so it is not refreshed or truncated.",
        ),
    ),
    Pair(
        id="en-c-upload-limit",
        lang="en",
        kind="limit",
        contradicts=True,
        a=(
            "Max upload size is 25 MB",
            "The upload endpoint rejects any file bigger than 25 MB with a 413.",
        ),
        b=(
            "Attachments up to 2 GB accepted",
            "Users can attach files as large as two gigabytes; bigger ones are refused.",
        ),
    ),
    Pair(
        id="en-c-code-freeze-date",
        lang="en",
        kind="date",
        contradicts=True,
        a=(
            "Code freeze starts December 15",
            "From Dec 15 only critical fixes may be merged until the new year.",
        ),
        b=(
            "Holiday lockdown begins on the 20th",
            "No merges to main after 20 December; the freeze lifts in January.",
        ),
    ),
    Pair(
        id="en-c-orm-choice",
        lang="en",
        kind="choice",
        contradicts=True,
        a=(
            "We use SQLAlchemy for DB access",
            "The data layer of the orders service is written with SQLAlchemy 2.0 models.",
        ),
        b=(
            "Orders service persistence is the Django ORM",
            "All queries in the orders service go through Django models and querysets.",
        ),
    ),
    Pair(
        id="en-c-support-first-response",
        lang="en",
        kind="duration",
        contradicts=True,
        a=(
            "Support replies within 4 hours",
            "Our SLA promises a first answer to every customer ticket in four hours.",
        ),
        b=(
            "First response target: one business day",
            "Customers should hear back from an agent by the next working day.",
        ),
    ),
    Pair(
        id="en-c-admin-vpn",
        lang="en",
        kind="yesno",
        contradicts=True,
        a=(
            "VPN required for the admin panel",
            "You have to be connected to the corporate VPN to reach the admin panel.",
        ),
        b=(
            "Admin dashboard is reachable from anywhere",
            "The back office sits behind SSO on the public internet; no tunnel needed.",
        ),
    ),
    Pair(
        id="en-c-search-nodes",
        lang="en",
        kind="count",
        contradicts=True,
        a=(
            "Search cluster runs three nodes",
            "Production Elasticsearch is a three-node cluster.",
        ),
        b=(
            "Five ES data nodes in prod",
            "We have 5 data nodes serving the search index in production.",
        ),
    ),
    Pair(
        id="en-c-office-opening",
        lang="en",
        kind="clock",
        contradicts=True,
        a=(
            "Office doors open at 08:00",
            "The Berlin office is unlocked from 08:00; before that you need a badge "
            "and the alarm code.",
        ),
        b=(
            "Front door unlocks at half past seven",
            "Reception opens the building at 7.30 every weekday morning.",
        ),
    ),
    Pair(
        id="en-c-invoice-day",
        lang="en",
        kind="date",
        contradicts=True,
        a=(
            "Invoices go out on the 1st",
            "Monthly subscription invoices are generated and emailed on the first "
            "day of each month.",
        ),
        b=(
            "Billing run happens on the fifth",
            "Customers receive their monthly bill on the 5th.",
        ),
    ),
    Pair(
        id="en-c-service-account-expiry",
        lang="en",
        kind="duration",
        contradicts=True,
        a=(
            "Service account passwords expire after 60 days",
            "IAM forces a new password for service accounts every 60 days.",
        ),
        b=(
            "Machine credentials are valid for a full year",
            "Credentials issued to bots and service users last twelve months before renewal.",
        ),
    ),
    Pair(
        id="en-c-ios-minimum",
        lang="en",
        kind="version",
        contradicts=True,
        a=(
            "App supports iOS 15 and up",
            "The iPhone app still runs on iOS 15; anything older can't install it.",
        ),
        b=(
            "Minimum deployment target is iOS 16",
            "We dropped 15 last year, so the Xcode project now targets iOS 16.",
        ),
    ),
    Pair(
        id="en-c-error-tracker",
        lang="en",
        kind="choice",
        contradicts=True,
        a=(
            "Errors are reported to Sentry",
            "Backend exceptions and frontend errors are all sent to Sentry.",
        ),
        b=(
            "Crash tracking lives in Bugsnag",
            "Every unhandled exception from our services ends up in Bugsnag.",
        ),
    ),
    Pair(
        id="en-c-etl-schedule",
        lang="en",
        kind="clock",
        contradicts=True,
        a=(
            "Warehouse ETL runs at noon",
            "The daily load into Snowflake is triggered at midday by Airflow.",
        ),
        b=(
            "Snowflake load job fires at 6 pm",
            "Airflow starts the daily warehouse import at 18:00.",
        ),
    ),
    Pair(
        id="en-c-laptop-refresh",
        lang="en",
        kind="duration",
        contradicts=True,
        a=(
            "Laptops are replaced every three years",
            "IT swaps developer laptops on a three-year cycle.",
        ),
        b=(
            "Dev machines refreshed after 24 months",
            "Engineers can request new hardware once their notebook is two years old.",
        ),
    ),
    Pair(
        id="en-c-session-timeout",
        lang="en",
        kind="duration",
        contradicts=True,
        a=(
            "Web sessions expire after 30 minutes idle",
            "Users are logged out of the dashboard after half an hour without activity.",
        ),
        b=(
            "Inactive users stay signed in for 8 hours",
            "The customer portal keeps an idle login alive for eight hours.",
        ),
    ),
    # -------------------------------------------------------------------- compatible
    Pair(
        id="en-ok-cdn-ttl-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "CDN cache TTL: 14 days",
            "CloudFront caches static assets for 14 days.",
        ),
        b=(
            "Static files stay at the edge for a fortnight",
            "Images and bundles are cached by the CDN for two weeks, so always use "
            "hashed filenames.",
        ),
    ),
    Pair(
        id="en-ok-retro-clock-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Sprint retro on Fridays at 2 pm",
            "The retrospective happens every other Friday at 2 in the afternoon.",
        ),
        b=(
            "Retro slot is 14:00 Friday",
            "Biweekly retros are booked for Fridays at 14:00 in the big room.",
        ),
    ),
    Pair(
        id="en-ok-healthcheck-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Health check interval is 30 seconds",
            "The load balancer probes /healthz on each instance every 30s.",
        ),
        b=(
            "LB pings instances every half minute",
            "An instance is marked unhealthy after three failed probes, one every half a minute.",
        ),
    ),
    Pair(
        id="en-ok-migration-lock-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Migration lock held half an hour max",
            "If a schema migration holds the lock longer than half an hour, the runner aborts it.",
        ),
        b=(
            "Migrations abort after 30 minutes on the lock",
            "The migrate step gives up and rolls back when the advisory lock isn't "
            "released within 30 min.",
        ),
    ),
    Pair(
        id="en-ok-sandbox-quota-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Each user gets 1 GB in the sandbox",
            "Sandbox accounts have a storage quota of one gigabyte.",
        ),
        b=(
            "Sandbox storage quota is 1024 MB",
            "Uploads fail once an account has used 1024 MB of sandbox storage.",
        ),
    ),
    Pair(
        id="en-ok-gateway-timeout-subject",
        lang="en",
        kind="subject",
        contradicts=False,
        a=(
            "Staging request timeout is 60s",
            "The staging API gateway waits up to a minute for a backend response.",
        ),
        b=(
            "Production gateway times out after 15 seconds",
            "In prod the gateway cuts requests off at 15 s to protect the backends.",
        ),
    ),
    Pair(
        id="en-ok-android-api-subject",
        lang="en",
        kind="subject",
        contradicts=False,
        a=(
            "Phone app targets API level 34",
            "The main Android app is compiled against and targets API 34.",
        ),
        b=(
            "Wear OS companion targets API 30",
            "The watch app still targets API level 30 because of the older devices we support.",
        ),
    ),
    Pair(
        id="en-ok-redis-attribute",
        lang="en",
        kind="attribute",
        contradicts=False,
        a=(
            "Redis snapshots are taken hourly",
            "The session Redis writes an RDB snapshot once an hour.",
        ),
        b=(
            "Redis RDB files kept for seven days",
            "Old RDB dumps of the session store are pruned after a week.",
        ),
    ),
    Pair(
        id="en-ok-mobile-cadence-history",
        lang="en",
        kind="history",
        contradicts=False,
        a=(
            "Mobile releases moved from biweekly to weekly",
            "We used to submit the apps every two weeks; since March we ship a build every week.",
        ),
        b=(
            "App store builds go out weekly",
            "A new iOS and Android version is submitted to the stores every week.",
        ),
    ),
    Pair(
        id="en-ok-api-pods-range",
        lang="en",
        kind="range",
        contradicts=False,
        a=(
            "Autoscaler keeps 2 to 6 API pods",
            "The HPA for the API deployment scales between a minimum of two and a "
            "maximum of six replicas.",
        ),
        b=(
            "API currently runs 4 pods",
            "Under normal weekday traffic there are four API replicas up.",
        ),
    ),
    Pair(
        id="en-ok-vault-elaboration",
        lang="en",
        kind="elaboration",
        contradicts=False,
        a=(
            "Secrets live in Vault",
            "Application secrets are stored in Vault.",
        ),
        b=(
            "How services read secrets",
            "Secrets are kept in HashiCorp Vault under kv/prod; each app fetches "
            "them at boot through the Vault agent sidecar.",
        ),
    ),
    Pair(
        id="en-ok-flags-restated",
        lang="en",
        kind="restated",
        contradicts=False,
        a=(
            "Feature flags are managed in LaunchDarkly",
            "All feature toggles are created and flipped in LaunchDarkly.",
        ),
        b=(
            "Toggle features via LaunchDarkly, not env vars",
            "Don't gate features with environment variables; use a LaunchDarkly flag instead.",
        ),
    ),
    Pair(
        id="en-ok-port-vs-workers",
        lang="en",
        kind="attribute",
        contradicts=False,
        a=(
            "App server binds to port 8080",
            "Gunicorn listens on 8080 inside the container; nginx proxies to it.",
        ),
        b=(
            "80 Celery workers across the fleet",
            "We run 80 Celery worker processes in total to drain the task queue.",
        ),
    ),
    Pair(
        id="en-ok-ci-history",
        lang="en",
        kind="history",
        contradicts=False,
        a=(
            "Moved off Jenkins last spring",
            "Until last April builds ran on our own Jenkins; we migrated every "
            "pipeline to GitHub Actions.",
        ),
        b=(
            "CI runs on GitHub Actions",
            "Workflows are defined in .github/workflows and run on hosted runners.",
        ),
    ),
    Pair(
        id="en-ok-rotation-attribute",
        lang="en",
        kind="attribute",
        contradicts=False,
        a=(
            "On-call rotation is weekly",
            "Each engineer in the SRE rotation is primary for one week at a time.",
        ),
        b=(
            "On-call handoff Mondays at 10",
            "The outgoing and incoming on-call meet Monday at 10 am to hand over open incidents.",
        ),
    ),
    Pair(
        id="en-ok-audit-debug-subject",
        lang="en",
        kind="subject",
        contradicts=False,
        a=(
            "Audit trail retained for seven years",
            "Compliance requires us to keep audit events for 7 years in cold storage.",
        ),
        b=(
            "Debug output dropped after 72 hours",
            "Verbose debug traces are purged three days after they're written.",
        ),
    ),
    Pair(
        id="en-ok-latency-range",
        lang="en",
        kind="range",
        contradicts=False,
        a=(
            "Checkout p95 must stay under 300 ms",
            "Our SLO for the checkout endpoint is a p95 latency below 300 ms.",
        ),
        b=(
            "Checkout p95 is around 180 ms",
            "Last month's dashboards show checkout responding in roughly 180 ms at "
            "the 95th percentile.",
        ),
    ),
    Pair(
        id="en-ok-contract-date-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Datadog contract renewal due 2025-03-31",
            "The observability vendor contract renews on 2025-03-31; finance needs "
            "the numbers a month earlier.",
        ),
        b=(
            "Datadog renews on March 31, 2025",
            "Our Datadog agreement comes up for renewal at the end of March 2025.",
        ),
    ),
    Pair(
        id="en-ok-postgres-history",
        lang="en",
        kind="history",
        contradicts=False,
        a=(
            "Migrated from MySQL to Postgres in 2022",
            "The core database was MySQL until 2022, when we switched to Postgres.",
        ),
        b=(
            "Main database is PostgreSQL 15",
            "The primary datastore is a managed PostgreSQL 15 instance on RDS.",
        ),
    ),
    Pair(
        id="en-ok-sev1-elaboration",
        lang="en",
        kind="elaboration",
        contradicts=False,
        a=(
            "Sev1 incidents page the on-call",
            "Any Sev1 pages the primary on-call engineer.",
        ),
        b=(
            "Sev1 escalation path",
            "A Sev1 sends a PagerDuty page to the primary; if nobody acknowledges "
            "within five minutes it escalates to the secondary, then the EM.",
        ),
    ),
    Pair(
        id="en-ok-release-branch-attribute",
        lang="en",
        kind="attribute",
        contradicts=False,
        a=(
            "Release branches are cut from main",
            "We create release/x.y from the tip of main on release day.",
        ),
        b=(
            "Old release branches deleted after 30 days",
            "A release branch is removed a month after its final tag is pushed.",
        ),
    ),
    Pair(
        id="en-ok-node-subject",
        lang="en",
        kind="subject",
        contradicts=False,
        a=(
            "Frontend builds use Node 20",
            "The React app's CI and local dev both run on Node 20 LTS.",
        ),
        b=(
            "Lambda functions run on Node 18",
            "Our AWS Lambdas are still on the nodejs18.x runtime.",
        ),
    ),
    Pair(
        id="en-ok-gpu-count-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "A dozen GPU nodes in the training cluster",
            "ML training runs on a dozen A100 boxes.",
        ),
        b=(
            "Training cluster has 12 GPU machines",
            "Model training jobs are scheduled onto 12 GPU servers via Slurm.",
        ),
    ),
    Pair(
        id="en-ok-refund-restated",
        lang="en",
        kind="restated",
        contradicts=False,
        a=(
            "Refunds over $500 need a manager",
            "Agents can't issue refunds above $500 on their own.",
        ),
        b=(
            "Large refunds require manager approval",
            "Any refund bigger than five hundred dollars must be approved by a "
            "support manager first.",
        ),
    ),
    Pair(
        id="en-ok-tech-talk-noon-units",
        lang="en",
        kind="units",
        contradicts=False,
        a=(
            "Lunch-and-learn at noon on Thursdays",
            "Internal tech talks are held Thursdays at noon with pizza.",
        ),
        b=(
            "Thursday tech talks start at 12:00",
            "The weekly talk series begins at 12:00 sharp in the kitchen area.",
        ),
    ),
]

TOPICS: list[Topic] = [
    # ------------------------------------------------------------------ same topic
    Topic(
        id="en-t-protected-main",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Main branch is protected",
                "Branch protection is enabled on main in every repository.",
            ),
            (
                "No direct pushes to main",
                "Nobody can commit straight to the default branch; everything lands "
                "through a pull request.",
            ),
            (
                "Changes reach the trunk only via PRs",
                "Git rejects a plain push to main, so open a PR even for a typo fix.",
            ),
        ),
    ),
    Topic(
        id="en-t-no-pii-in-logs",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Never log personal data",
                "Personal information must not be written to logs.",
            ),
            (
                "Scrub emails and names before logging",
                "Strip customer emails, names and phone numbers out of anything "
                "that goes to stdout or Loki.",
            ),
            (
                "PII stays out of log output",
                "A log line containing customer identity details counts as a privacy incident.",
            ),
        ),
    ),
    Topic(
        id="en-t-utc-timestamps",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "All timestamps stored in UTC",
                "Every datetime column in the database holds UTC values.",
            ),
            (
                "Never persist local time",
                "Convert to Coordinated Universal Time before saving; the user's "
                "zone is only applied when rendering.",
            ),
        ),
    ),
    Topic(
        id="en-t-expense-receipts",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Expenses above €25 need a receipt",
                "Claims over 25 euros are only reimbursed with a receipt attached.",
            ),
            (
                "Attach proof of purchase for bigger claims",
                "Finance rejects any reimbursement of more than twenty-five euros "
                "without the paper or PDF slip.",
            ),
        ),
    ),
    Topic(
        id="en-t-pinned-deps",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Pin all dependency versions",
                "Every third-party package must be pinned to an exact version.",
            ),
            (
                "No floating ranges in requirements",
                "Don't write >= or ~= for libraries; the lockfile decides what gets installed.",
            ),
            (
                "Exact versions only for packages",
                "Unpinned libraries broke the build twice, so each one now has a fixed version.",
            ),
        ),
    ),
    Topic(
        id="en-t-enterprise-slack",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Enterprise customers get a shared Slack channel",
                "Every enterprise account has a dedicated Slack Connect channel with "
                "our support team.",
            ),
            (
                "Big accounts talk to us in their own room",
                "Customers on the top plan each get a private channel where they can "
                "reach support directly.",
            ),
        ),
    ),
    Topic(
        id="en-t-reversible-migrations",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Migrations must be reversible",
                "Every database migration needs to be reversible.",
            ),
            (
                "Write a down step for each schema change",
                "Alembic revisions without a working downgrade() are rejected in review.",
            ),
            (
                "Be able to roll back any DB change",
                "If a table alteration can't be undone, it doesn't get merged.",
            ),
        ),
    ),
    Topic(
        id="en-t-visitor-sign-in",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Visitors sign in at reception",
                "Guests must register at the front desk when they arrive.",
            ),
            (
                "Guests need a badge from the front desk",
                "Anyone who doesn't work here has to be logged by the receptionist "
                "and wear a visitor pass.",
            ),
        ),
    ),
    Topic(
        id="en-t-mfa-mandatory",
        lang="en",
        kind="duplicate",
        same=True,
        notes=(
            (
                "MFA required for all staff accounts",
                "Multi-factor authentication is mandatory for every employee account.",
            ),
            (
                "Two-factor auth is mandatory for employees",
                "All staff accounts must have MFA enabled.",
            ),
        ),
    ),
    Topic(
        id="en-t-openapi-docs",
        lang="en",
        kind="duplicate",
        same=True,
        notes=(
            (
                "API docs are generated from the OpenAPI spec",
                "The public API reference is built from openapi.yaml in the repo.",
            ),
            (
                "API reference generated from openapi.yaml",
                "We generate the API documentation from the OpenAPI file in the repository.",
            ),
        ),
    ),
    Topic(
        id="en-t-stale-flags",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Delete flags 90 days after full rollout",
                "A feature flag that has been fully on for 90 days must be removed from code.",
            ),
            (
                "Clean up toggles that sat at 100% for a quarter",
                "Once a switch has been enabled for everyone for three months, rip "
                "out the dead branch.",
            ),
        ),
    ),
    Topic(
        id="en-t-hotfix-branching",
        lang="en",
        kind="duplicate",
        same=True,
        notes=(
            (
                "Hotfixes branch from the latest release tag",
                "Hotfix branches are created from the most recent release tag, not from main.",
            ),
            (
                "Hotfix branches start at the last release tag",
                "Branch hotfixes off the latest release tag rather than main.",
            ),
        ),
    ),
    Topic(
        id="en-t-idempotent-jobs",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Pipeline jobs must be idempotent",
                "Every data pipeline task has to be idempotent.",
            ),
            (
                "Rerunning an ETL step must not duplicate rows",
                "Running a load twice for the same day should leave the warehouse "
                "exactly as running it once.",
            ),
            (
                "Tasks have to be safe to retry",
                "Airflow retries failed tasks automatically, so write them to "
                "upsert instead of append.",
            ),
        ),
    ),
    Topic(
        id="en-t-crash-free-halt",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Halt rollout below 99.5% crash-free",
                "Pause a staged app release if the crash-free sessions rate drops under 99.5%.",
            ),
            (
                "Stop the phased release when crashes pass half a percent",
                "If more than 0.5% of sessions crash on the new build, we freeze "
                "the store rollout.",
            ),
        ),
    ),
    Topic(
        id="en-t-interview-loop",
        lang="en",
        kind="duplicate",
        same=True,
        notes=(
            (
                "Engineering candidates do four interviews",
                "The hiring loop for engineers consists of four interviews.",
            ),
            (
                "Engineering hiring loop has four rounds",
                "Engineer candidates go through four interview rounds.",
            ),
        ),
    ),
    Topic(
        id="en-t-disk-encryption",
        lang="en",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Company laptops need full-disk encryption",
                "Full-disk encryption must be turned on for every company laptop.",
            ),
            (
                "FileVault or BitLocker on every work machine",
                "IT won't hand over a notebook until its drive is encrypted.",
            ),
        ),
    ),
    # ------------------------------------------------------------- not same: words
    Topic(
        id="en-t-keys-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Bastion SSH host keys regenerated each quarter",
                "Ops regenerates the SSH host keys on the bastion every three months.",
            ),
            (
                "Translation keys use dot notation",
                "Keys in the i18n files look like checkout.button.pay, grouped by screen.",
            ),
        ),
    ),
    Topic(
        id="en-t-release-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Release notes are written in Notion",
                "The product manager drafts release notes on the Notion release page.",
            ),
            (
                "Release pooled connections in a finally block",
                "Always release the DB connection back to the pool in finally, or the "
                "pool runs dry under load.",
            ),
        ),
    ),
    Topic(
        id="en-t-queue-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Support queue triaged by the early shift",
                "Whoever starts first in support goes through the new-ticket queue "
                "and assigns priorities.",
            ),
            (
                "Email queue is durable and mirrored",
                "The RabbitMQ queue for outgoing emails is declared durable and "
                "mirrored across nodes.",
            ),
        ),
    ),
    Topic(
        id="en-t-booking-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Book standing desks through Robin",
                "The standing desks on the second floor are reserved with the Robin booking app.",
            ),
            (
                "Bookings table is partitioned by month",
                "The bookings table in the reservations DB is range-partitioned by "
                "created_at month.",
            ),
        ),
    ),
    Topic(
        id="en-t-branch-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Feature branches are named feat/<ticket>",
                "Name feature branches after the Jira ticket, e.g. feat/PAY-123.",
            ),
            (
                "Lyon branch office closes in August",
                "Our Lyon branch shuts for the whole of August; redirect visitors to Paris.",
            ),
        ),
    ),
    Topic(
        id="en-t-token-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Access tokens are RS256 JWTs",
                "Our auth service issues access tokens as JWTs signed with RS256.",
            ),
            (
                "Search tokenizer splits on hyphens",
                "The custom analyzer's tokenizer breaks words at hyphens so "
                "'e-mail' matches 'mail'.",
            ),
            (
                "Coffee machine tokens at reception",
                "Ask the front desk for tokens if the kitchen espresso machine "
                "stops taking badges.",
            ),
        ),
    ),
    Topic(
        id="en-t-cluster-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "Platform team upgrades the Kubernetes cluster",
                "Only the platform team performs k8s cluster version upgrades.",
            ),
            (
                "Customer segments come from k-means clustering",
                "Analytics builds customer segments with k-means clustering in the churn notebook.",
            ),
        ),
    ),
    Topic(
        id="en-t-pool-samewords",
        lang="en",
        kind="samewords",
        same=False,
        notes=(
            (
                "DB connection pool size is 20",
                "Each API instance keeps a pool of 20 database connections.",
            ),
            (
                "Car pool sign-up sheet on the fridge",
                "People sharing rides to the offsite put their names on the car "
                "pool list in the kitchen.",
            ),
        ),
    ),
    # ------------------------------------------------------- not same: complementary
    Topic(
        id="en-t-release-mgmt-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Release manager rotates every sprint",
                "A different engineer acts as release manager each sprint.",
            ),
            (
                "Release candidates are tagged rc1, rc2…",
                "Candidate builds get tags like v4.2.0-rc1 before the final tag.",
            ),
            (
                "Changelog generated from conventional commits",
                "CHANGELOG.md is produced automatically from feat:/fix: commit messages.",
            ),
        ),
    ),
    Topic(
        id="en-t-billing-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Stripe processes card payments",
                "All card charges go through Stripe; we never see raw card numbers.",
            ),
            (
                "Failed charges retried three times",
                "Dunning retries a declined card three times over seven days before "
                "suspending the account.",
            ),
            (
                "Invoice PDFs archived in S3",
                "Every invoice PDF is stored in the finance-archive bucket for tax audits.",
            ),
        ),
    ),
    Topic(
        id="en-t-clickstream-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Clickstream topic has 12 partitions",
                "The Kafka clickstream topic is split into 12 partitions keyed by user id.",
            ),
            (
                "Consumers commit offsets after the warehouse write",
                "The clickstream consumer only commits its offset once the batch is in BigQuery.",
            ),
            (
                "Event schemas must stay backward compatible",
                "Changes to clickstream event schemas go through the schema registry "
                "in BACKWARD mode.",
            ),
        ),
    ),
    Topic(
        id="en-t-support-tooling-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Zendesk macros live in the shared folder",
                "Canned replies for common questions are kept as Zendesk macros in "
                "the Team folder.",
            ),
            (
                "Tier-2 escalations go to #support-eng",
                "When an agent needs an engineer, they post the ticket link in #support-eng.",
            ),
            (
                "CSAT survey sent when a ticket closes",
                "Customers get a one-question satisfaction survey after their ticket is solved.",
            ),
        ),
    ),
    Topic(
        id="en-t-build-farm-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "iOS build farm is six Mac minis",
                "Six Mac minis in the server closet run our iOS CI builds.",
            ),
            (
                "Build Macs reboot Sunday night",
                "The Mac minis restart every Sunday night to apply macOS updates.",
            ),
            (
                "Xcode versions managed with xcodes",
                "Install or switch Xcode on the build machines with the xcodes CLI, never by hand.",
            ),
        ),
    ),
    Topic(
        id="en-t-security-program-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Yearly external pen test",
                "An outside firm runs a penetration test against the platform once a year.",
            ),
            (
                "Vulnerability reports go to security@",
                "Researchers report issues to security@ourcompany.com, which opens a "
                "private ticket.",
            ),
            (
                "Dependabot alerts triaged within a week",
                "Someone from the security guild must look at each Dependabot alert "
                "within seven days.",
            ),
        ),
    ),
    Topic(
        id="en-t-mobile-app-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Push notifications sent via FCM",
                "Both apps receive push notifications through Firebase Cloud Messaging.",
            ),
            (
                "Deep links use app.example.com",
                "Universal links and Android app links are served from the app.example.com domain.",
            ),
            (
                "Store screenshots are in Figma",
                "The App Store and Play listing screenshots are kept in the design "
                "team's Figma file.",
            ),
        ),
    ),
    Topic(
        id="en-t-observability-complementary",
        lang="en",
        kind="complementary",
        same=False,
        notes=(
            (
                "Service dashboards are in Grafana",
                "Each service has a Grafana dashboard named after its repository.",
            ),
            (
                "Alertmanager routes alerts to PagerDuty",
                "Prometheus alerts with severity=page are forwarded by Alertmanager to PagerDuty.",
            ),
            (
                "Traces sampled at 10 percent",
                "OpenTelemetry keeps one trace in ten for regular traffic and all "
                "traces that end in an error.",
            ),
        ),
    ),
]
