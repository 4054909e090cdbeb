"""German labelled tidy-up set (issue 27), written blind before tuning."""

from __future__ import annotations

from tests.tidy.sets import Pair, Topic

PAIRS: list[Pair] = [
    # --- contradicting ---------------------------------------------------------------
    Pair(
        "de-c-backup-zeit",
        "de",
        "clock",
        True,
        (
            "Nächtliche Sicherung der Produktionsdatenbank um 2:00 Uhr",
            "Der Cronjob pg-dump-prod startet jede Nacht um 2:00 Uhr und schreibt den Dump nach "
            "S3.",
        ),
        (
            "Prod-DB-Backup beginnt um drei",
            "Das Backup unserer Produktiv-Datenbank wird jede Nacht um drei angestoßen, "
            "damit es nicht mit dem Reindex kollidiert.",
        ),
    ),
    Pair(
        "de-c-log-aufbewahrung",
        "de",
        "retention",
        True,
        (
            "Logs werden 30 Tage aufbewahrt",
            "Anwendungslogs bleiben 30 Tage in Loki, danach werden sie automatisch gelöscht.",
        ),
        (
            "Aufbewahrungsfrist für Logdateien: zwei Wochen",
            "Die Aufbewahrungsfrist für Anwendungsprotokolle beträgt zwei Wochen; "
            "ältere Einträge räumt ein Job weg.",
        ),
    ),
    Pair(
        "de-c-deploy-wochentag",
        "de",
        "weekday",
        True,
        (
            "Produktionsreleases gehen dienstags raus",
            "Wir deployen in die Produktion immer am Dienstag, nachdem das Team den "
            "Release-Kandidaten abgenommen hat.",
        ),
        (
            "Donnerstag ist Deploytag",
            "Neue Versionen landen donnerstags auf den Live-Servern.",
        ),
    ),
    Pair(
        "de-c-python-version",
        "de",
        "version",
        True,
        (
            "Backend läuft auf Python 3.11",
            "Alle Backend-Dienste nutzen Python 3.11; das Basis-Image ist python:3.11-slim.",
        ),
        (
            "Laufzeitumgebung der Serverdienste: 3.12",
            "Unsere Services werden mit Python 3.12 gebaut und betrieben.",
        ),
    ),
    Pair(
        "de-c-oncall-zahlung",
        "de",
        "name",
        True,
        (
            "Rufbereitschaft für den Zahlungsdienst hat Team Kasse",
            "Wenn der Payment-Service nachts ausfällt, wird die Bereitschaft von Team Kasse "
            "alarmiert.",
        ),
        (
            "Payment-Alarme gehen an die Plattform-Leute",
            "Bei Störungen der Zahlungsabwicklung piept PagerDuty das Plattformteam an, "
            "nicht die Produktteams.",
        ),
    ),
    Pair(
        "de-c-upload-groesse",
        "de",
        "limit",
        True,
        (
            "Uploads maximal 10 MB",
            "Der Upload-Endpunkt lehnt Dateien über 10 MB mit HTTP 413 ab.",
        ),
        (
            "Dateigröße beim Hochladen: bis 25 Megabyte",
            "Nutzer können Anhänge bis zu einer Maximalgröße von 25 Megabyte hochladen.",
        ),
    ),
    Pair(
        "de-c-ratenlimit",
        "de",
        "limit",
        True,
        (
            "Öffentliche API: 100 Anfragen pro Minute",
            "Pro API-Schlüssel erlaubt das Gateway 100 Requests pro Minute, danach kommt 429.",
        ),
        (
            "Ratenlimit der Public API liegt bei 60/min",
            "Externe Clients dürfen die öffentliche Schnittstelle höchstens sechzigmal in der "
            "Minute aufrufen.",
        ),
    ),
    Pair(
        "de-c-region",
        "de",
        "name",
        True,
        (
            "Produktion läuft in Frankfurt",
            "Unsere Produktivumgebung steht in der AWS-Region eu-central-1.",
        ),
        (
            "Prod-Cluster in Irland",
            "Die Live-Systeme betreiben wir in eu-west-1, weil dort alle Instanztypen verfügbar "
            "sind.",
        ),
    ),
    Pair(
        "de-c-checkout-replikas",
        "de",
        "count",
        True,
        (
            "Checkout-Service mit drei Replikas",
            "In Produktion laufen vom Checkout drei Replikas hinter dem Load Balancer.",
        ),
        (
            "Checkout: fünf Pods in Prod",
            "Das Deployment checkout-api ist in der Produktion auf 5 Pods konfiguriert.",
        ),
    ),
    Pair(
        "de-c-admin-2fa",
        "de",
        "yesno",
        True,
        (
            "2FA für Admin-Konten ist Pflicht",
            "Wer Administratorrechte im Backoffice hat, muss sich mit einem zweiten Faktor "
            "anmelden.",
        ),
        (
            "Admins loggen sich ohne zweiten Faktor ein",
            "Für Administratoren im Backoffice ist keine Zwei-Faktor-Authentifizierung "
            "eingerichtet; "
            "Benutzername und Passwort genügen.",
        ),
    ),
    Pair(
        "de-c-app-release-datum",
        "de",
        "date",
        True,
        (
            "Version 4.0 der Mobile-App erscheint am 31.03.2025",
            "Der Store-Release von 4.0 ist für den 31.03.2025 festgelegt, Marketing plant die "
            "Kampagne entsprechend.",
        ),
        (
            "Launch der neuen App-Version am 14. April",
            "Die 4.0 der App geht am 14. April 2025 in beiden Stores live.",
        ),
    ),
    Pair(
        "de-c-ci-werkzeug",
        "de",
        "choice",
        True,
        (
            "CI läuft auf GitHub Actions",
            "Alle Builds und Tests unserer Repos laufen in GitHub-Actions-Workflows.",
        ),
        (
            "Wir bauen mit GitLab CI",
            "Kontinuierliche Integration machen wir über GitLab-Pipelines mit eigenen Runnern.",
        ),
    ),
    Pair(
        "de-c-sprintlaenge",
        "de",
        "duration",
        True,
        (
            "Sprints dauern zwei Wochen",
            "Unser Sprintzyklus ist zweiwöchig, Planning ist jeweils am ersten Montag.",
        ),
        (
            "Iterationen gehen drei Wochen",
            "Das Team arbeitet in dreiwöchigen Iterationen mit Review am letzten Freitag.",
        ),
    ),
    Pair(
        "de-c-versand-timeout",
        "de",
        "duration",
        True,
        (
            "Timeout für den Versanddienst: 30 Sekunden",
            "HTTP-Aufrufe an den Versanddienst warten maximal 30 Sekunden auf eine Antwort.",
        ),
        (
            "Shipping-API bricht nach 5 s ab",
            "Der Client für die Shipping-API hat ein Zeitlimit von fünf Sekunden pro Anfrage.",
        ),
    ),
    Pair(
        "de-c-rechnungslauf",
        "de",
        "date",
        True,
        (
            "Rechnungen gehen am Monatsersten raus",
            "Der Abrechnungsjob verschickt alle Kundenrechnungen am 1. jedes Monats.",
        ),
        (
            "Abrechnungslauf zur Monatsmitte",
            "Immer am Fünfzehnten erstellt und versendet billing die Rechnungen an die Kunden.",
        ),
    ),
    Pair(
        "de-c-daily-uhrzeit",
        "de",
        "clock",
        True,
        (
            "Daily um 9:30",
            "Das Daily findet jeden Morgen um 9:30 Uhr im Raum Spree oder per Meet statt.",
        ),
        (
            "Standup beginnt um zehn",
            "Wir treffen uns täglich um zehn zum kurzen Abstimmen.",
        ),
    ),
    Pair(
        "de-c-node-version",
        "de",
        "version",
        True,
        (
            "Frontend baut mit Node 18",
            "Das Web-Frontend wird mit Node 18 LTS gebaut, die .nvmrc steht auf 18.",
        ),
        (
            "Node.js 20 für die Weboberfläche vorgeschrieben",
            "Für den Build der Weboberfläche brauchst du Node 20, ältere Versionen lehnt das "
            "engines-Feld ab.",
        ),
    ),
    Pair(
        "de-c-laufwerk-kontingent",
        "de",
        "limit",
        True,
        (
            "Speicherkontingent auf dem Teamlaufwerk: 50 GB",
            "Jede Person hat auf dem gemeinsamen Netzlaufwerk 50 GB Platz.",
        ),
        (
            "Pro Nutzer 100 Gigabyte auf dem Gruppenlaufwerk",
            "Das Kontingent je Mitarbeiter auf dem Gruppenlaufwerk ist auf 100 Gigabyte "
            "festgelegt.",
        ),
    ),
    Pair(
        "de-c-buerotage",
        "de",
        "count",
        True,
        (
            "Zwei Bürotage pro Woche",
            "Wir sind im Schnitt an zwei Tagen pro Woche vor Ort im Büro.",
        ),
        (
            "Präsenzpflicht: dreimal wöchentlich",
            "Laut Vereinbarung kommt jeder dreimal die Woche ins Office.",
        ),
    ),
    Pair(
        "de-c-crm-import-intervall",
        "de",
        "duration",
        True,
        (
            "ETL-Job läuft stündlich",
            "Der Import aus dem CRM ins Data Warehouse wird einmal pro Stunde angestoßen.",
        ),
        (
            "CRM-Daten kommen im Viertelstundentakt",
            "Die Datenpipeline holt alle 15 Minuten neue Datensätze aus dem CRM.",
        ),
    ),
    Pair(
        "de-c-hotline-zeiten",
        "de",
        "clock",
        True,
        (
            "Support ist bis 18 Uhr erreichbar",
            "Die Kundenhotline nimmt werktags Anrufe bis 18 Uhr an.",
        ),
        (
            "Hotline schließt um halb fünf",
            "Um halb fünf nachmittags ist beim Kundentelefon Feierabend; danach läuft nur die "
            "Bandansage.",
        ),
    ),
    Pair(
        "de-c-bestell-datenbank",
        "de",
        "choice",
        True,
        (
            "Bestellservice speichert in PostgreSQL",
            "Der Bestellservice nutzt PostgreSQL als Datenbank, Zugriffe laufen über SQLAlchemy.",
        ),
        (
            "Orders liegen in MySQL",
            "Die Bestellungen persistiert der Order-Dienst in einer MySQL-Instanz.",
        ),
    ),
    Pair(
        "de-c-servicekonto-rotation",
        "de",
        "duration",
        True,
        (
            "Servicekonten-Passwörter alle 90 Tage wechseln",
            "Die Kennwörter technischer Konten müssen spätestens nach 90 Tagen rotiert werden.",
        ),
        (
            "Rotation der Service-Account-Kennwörter: jährlich",
            "Passwörter von Servicekonten tauschen wir einmal im Jahr aus.",
        ),
    ),
    Pair(
        "de-c-android-darkmode",
        "de",
        "yesno",
        True,
        (
            "Dark Mode in der Android-App aktiv",
            "Das Feature-Flag dark_mode ist für alle Android-Nutzer eingeschaltet.",
        ),
        (
            "Dunkles Design auf Android abgeschaltet",
            "Auf Android-Geräten ist das dunkle Farbschema derzeit nicht freigegeben.",
        ),
    ),
    Pair(
        "de-c-laptop-modell",
        "de",
        "name",
        True,
        (
            "Neue Entwickler bekommen ein MacBook Pro",
            "Zum Start erhalten Entwicklerinnen und Entwickler ein MacBook Pro mit 32 GB RAM.",
        ),
        (
            "Standardgerät für Neueinstellungen: ThinkPad",
            "Wer im Engineering anfängt, kriegt ein Lenovo ThinkPad mit vorinstalliertem Linux.",
        ),
    ),
    Pair(
        "de-c-review-freigaben",
        "de",
        "count",
        True,
        (
            "Pull Requests brauchen zwei Approvals",
            "Ein PR darf erst gemergt werden, wenn zwei Reviewer zugestimmt haben.",
        ),
        (
            "Eine Freigabe reicht zum Mergen",
            "Ein einziges Approve genügt, danach kann man den Branch selbst reinholen.",
        ),
    ),
    Pair(
        "de-c-kundendb-aufbewahrung",
        "de",
        "retention",
        True,
        (
            "Kundendatenbank-Sicherungen 90 Tage vorhalten",
            "Backups der Kunden-DB werden 90 Tage lang aufbewahrt, dann löscht sie die "
            "Lifecycle-Regel im Bucket.",
        ),
        (
            "Sicherungsstände der Kunden-DB nach einem Monat weg",
            "Ältere Sicherungen der Kundendatenbank behalten wir nicht länger als einen Monat.",
        ),
    ),
    # --- compatible (hard negatives) -------------------------------------------------
    Pair(
        "de-ok-ticketanhaenge-einheiten",
        "de",
        "units",
        False,
        (
            "Ticket-Anhänge werden nach zwei Wochen gelöscht",
            "Screenshots und Dateien in Support-Tickets entfernt Zendesk automatisch nach zwei "
            "Wochen.",
        ),
        (
            "Aufbewahrung von Ticketanhängen: 14 Tage",
            "Anhänge an Supportanfragen bleiben 14 Tage erhalten.",
        ),
    ),
    Pair(
        "de-ok-retro-nachmittags",
        "de",
        "units",
        False,
        (
            "Retro freitags um 14 Uhr",
            "Die Sprint-Retro ist immer freitags um 14 Uhr.",
        ),
        (
            "Retrospektive Freitag 2 Uhr nachmittags",
            "Wir machen die Retrospektive am Freitag um zwei Uhr nachmittags, Dauer eine Stunde.",
        ),
    ),
    Pair(
        "de-ok-cache-halbe-stunde",
        "de",
        "units",
        False,
        (
            "Cache-Einträge verfallen nach einer halben Stunde",
            "Produktdaten im Redis-Cache laufen nach einer halben Stunde ab.",
        ),
        (
            "TTL des Produkt-Caches: 30 Minuten",
            "Für gecachte Produktinformationen in Redis ist eine TTL von 30 min gesetzt.",
        ),
    ),
    Pair(
        "de-ok-imagegroesse-einheiten",
        "de",
        "units",
        False,
        (
            "Docker-Images höchstens 1,5 GB",
            "Container-Images über 1,5 GB lehnt unsere Registry ab.",
        ),
        (
            "Maximale Imagegröße: 1500 MB",
            "In der Registry darf ein Image maximal 1500 Megabyte groß sein.",
        ),
    ),
    Pair(
        "de-ok-kafka-dutzend",
        "de",
        "units",
        False,
        (
            "Wir betreiben zwölf Kafka-Broker",
            "Das Produktions-Kafka besteht aus 12 Brokern in drei Availability Zones.",
        ),
        (
            "Kafka-Cluster mit einem Dutzend Brokern",
            "Unser Kafka läuft auf einem Dutzend Broker-Knoten.",
        ),
    ),
    Pair(
        "de-ok-wartungsfenster",
        "de",
        "units",
        False,
        (
            "Wartungsfenster sonntags 22–24 Uhr",
            "Geplante Wartungen an der Datenbank finden sonntags von 22 bis 24 Uhr statt.",
        ),
        (
            "DB-Wartung Sonntagabend zwischen zehn und Mitternacht",
            "Arbeiten an der Datenbank erledigen wir am Sonntagabend zwischen zehn und "
            "Mitternacht.",
        ),
    ),
    Pair(
        "de-ok-zertifikat-datum",
        "de",
        "units",
        False,
        (
            "TLS-Zertifikat läuft am 01.06.2025 ab",
            "Das Wildcard-Zertifikat für *.shop.example läuft am 01.06.2025 ab und muss vorher "
            "erneuert werden.",
        ),
        (
            "Shop-Zertifikat gültig bis 1. Juni 2025",
            "Das Wildcard-Zertifikat des Shops ist bis zum 1. Juni 2025 gültig.",
        ),
    ),
    Pair(
        "de-ok-session-minuten",
        "de",
        "units",
        False,
        (
            "Sitzungen laufen nach 8 Stunden ab",
            "Im Backoffice wird man nach acht Stunden automatisch abgemeldet.",
        ),
        (
            "Session-Timeout im Backoffice: 480 Minuten",
            "Die Login-Sitzung im Backoffice ist 480 min gültig.",
        ),
    ),
    Pair(
        "de-ok-k8s-staging-prod",
        "de",
        "subject",
        False,
        (
            "Staging-Cluster läuft auf Kubernetes 1.29",
            "Das Staging wurde letzte Woche auf Kubernetes 1.29 aktualisiert.",
        ),
        (
            "Produktion noch auf Kubernetes 1.27",
            "Der Prod-Cluster bleibt vorerst bei Version 1.27, das Upgrade folgt nach dem "
            "Quartalsabschluss.",
        ),
    ),
    Pair(
        "de-ok-mindestversion-plattform",
        "de",
        "subject",
        False,
        (
            "iOS-App unterstützt ab iOS 16",
            "Die Mindestversion für unsere iPhone-App ist iOS 16.",
        ),
        (
            "Android-App ab Android 10",
            "Auf Android setzen wir API-Level 29, also Android 10, als Minimum voraus.",
        ),
    ),
    Pair(
        "de-ok-drucker-standorte",
        "de",
        "subject",
        False,
        (
            "Drucker im Münchner Büro steht im 2. OG",
            "In München findet ihr den Netzwerkdrucker im zweiten Stock neben der Teeküche.",
        ),
        (
            "Berliner Drucker in der Küche",
            "Im Berliner Büro steht der Drucker direkt in der Küche.",
        ),
    ),
    Pair(
        "de-ok-limits-login-reset",
        "de",
        "subject",
        False,
        (
            "Login: maximal 5 Versuche pro Minute",
            "Der Anmelde-Endpunkt lässt pro IP höchstens fünf Versuche in der Minute zu.",
        ),
        (
            "Passwort-Reset-Mails höchstens 3 pro Stunde",
            "Pro Konto verschicken wir maximal drei E-Mails zum Zurücksetzen des Passworts in "
            "einer Stunde.",
        ),
    ),
    Pair(
        "de-ok-biometrie-plattform",
        "de",
        "subject",
        False,
        (
            "Face ID in der iOS-App aktiv",
            "Auf dem iPhone können sich Nutzer per Face ID anmelden.",
        ),
        (
            "Fingerabdruck-Login auf Android noch aus",
            "Biometrische Anmeldung ist in der Android-App noch nicht eingeschaltet.",
        ),
    ),
    Pair(
        "de-ok-wiki-sicherung",
        "de",
        "attribute",
        False,
        (
            "Wiki-Datenbank wird sonntags gesichert",
            "Die Sicherung der Confluence-Datenbank läuft einmal pro Woche am Sonntag.",
        ),
        (
            "Wiki-Backups ein halbes Jahr aufbewahren",
            "Sicherungen des Wikis bleiben sechs Monate im Archiv-Bucket.",
        ),
    ),
    Pair(
        "de-ok-rechnung-pdf-positionen",
        "de",
        "attribute",
        False,
        (
            "Rechnungs-PDFs höchstens 2 MB",
            "Die generierten Rechnungen als PDF dürfen nicht größer als 2 MB sein, sonst blockt "
            "der Mailserver.",
        ),
        (
            "Bis zu 500 Positionen pro Rechnung",
            "Eine einzelne Rechnung kann maximal 500 Positionen enthalten, danach wird sie "
            "aufgeteilt.",
        ),
    ),
    Pair(
        "de-ok-nachtjob-menge-dauer",
        "de",
        "attribute",
        False,
        (
            "Nachtjob verarbeitet rund 3 Millionen Events",
            "Der nächtliche Aggregationsjob verarbeitet pro Lauf etwa drei Millionen Events.",
        ),
        (
            "Aggregationsjob braucht etwa 40 Minuten",
            "Ein Lauf der nächtlichen Aggregation dauert im Schnitt 40 Minuten.",
        ),
    ),
    Pair(
        "de-ok-rufbereitschaft-wechsel-verguetung",
        "de",
        "attribute",
        False,
        (
            "Rufbereitschaft wechselt jeden Montag",
            "Die Bereitschaftswoche beginnt montags um 10 Uhr mit der Übergabe.",
        ),
        (
            "Bereitschaft wird mit 300 € pro Woche vergütet",
            "Für eine Woche Rufbereitschaft gibt es eine Pauschale von 300 Euro brutto.",
        ),
    ),
    Pair(
        "de-ok-appstore-montags",
        "de",
        "history",
        False,
        (
            "App-Store-Einreichung jetzt montags",
            "Früher haben wir iOS-Builds freitags bei Apple eingereicht, seit dem Frühjahr machen "
            "wir das montags, damit das Review nicht übers Wochenende hängt.",
        ),
        (
            "iOS-Builds gehen montags zu Apple",
            "Neue Builds der iPhone-App reichen wir am Montag zur Prüfung ein.",
        ),
    ),
    Pair(
        "de-ok-tracker-linear",
        "de",
        "history",
        False,
        (
            "Issue-Tracker: Linear",
            "Tickets lagen früher in Jira, inzwischen führen wir alles in Linear.",
        ),
        (
            "Wir planen in Linear",
            "Unser Backlog und alle Issues verwalten wir in Linear.",
        ),
    ),
    Pair(
        "de-ok-java-abrechnung",
        "de",
        "history",
        False,
        (
            "Abrechnungsservice von Java 11 auf 17 gehoben",
            "Wir haben den Abrechnungsservice im Januar von Java 11 auf Java 17 migriert.",
        ),
        (
            "Abrechnungsservice läuft mit Java 17",
            "Der Billing-Service wird mit JDK 17 gebaut und ausgeliefert.",
        ),
    ),
    Pair(
        "de-ok-suche-instanzen",
        "de",
        "range",
        False,
        (
            "Suchdienst skaliert zwischen 2 und 6 Instanzen",
            "Der HorizontalPodAutoscaler der Suche hat min 2 und max 6 Replikas.",
        ),
        (
            "Aktuell vier Instanzen der Suche",
            "Im Moment laufen vier Pods des Suchdienstes, weil die Last hoch ist.",
        ),
    ),
    Pair(
        "de-ok-latenz-ziel",
        "de",
        "range",
        False,
        (
            "Ziel: API-Antwortzeit unter 200 ms",
            "Unser SLO verlangt, dass 95 % der Anfragen an die Kunden-API in weniger als 200 ms "
            "beantwortet werden.",
        ),
        (
            "Gemessene p95-Latenz: 140 ms",
            "Laut Grafana liegt das 95. Perzentil der Kunden-API derzeit bei 140 ms.",
        ),
    ),
    Pair(
        "de-ok-vault-details",
        "de",
        "elaboration",
        False,
        (
            "Secrets liegen in Vault",
            "Zugangsdaten und API-Schlüssel verwalten wir in HashiCorp Vault.",
        ),
        (
            "Datenbank-Passwörter kommen beim Start aus Vault",
            "Jeder Dienst liest beim Hochfahren seine DB-Zugangsdaten unter secret/db/<dienst> aus "
            "Vault; das Token erneuert sich alle 24 Stunden.",
        ),
    ),
    Pair(
        "de-ok-squash-merge",
        "de",
        "elaboration",
        False,
        (
            "Feature-Branches werden per Squash gemergt",
            "Wir nutzen ausschließlich Squash-Merges.",
        ),
        (
            "Beim Mergen alle Commits zu einem zusammenfassen",
            "Ein Branch landet als ein einzelner Commit auf main; die Commit-Message folgt "
            "Conventional Commits, z. B. feat: oder fix:.",
        ),
    ),
    Pair(
        "de-ok-rollback-plan",
        "de",
        "restated",
        False,
        (
            "Kein Deployment ohne Rollback-Plan",
            "Bevor etwas in Produktion geht, muss feststehen, wie man es zurückdreht.",
        ),
        (
            "Jedes Release braucht einen dokumentierten Weg zurück",
            "Im Release-Ticket steht immer, mit welchen Schritten sich die Änderung rückgängig "
            "machen lässt.",
        ),
    ),
    Pair(
        "de-ok-desk-sharing",
        "de",
        "restated",
        False,
        (
            "Im Büro gibt es keine festen Plätze",
            "Arbeitsplätze sind niemandem fest zugewiesen.",
        ),
        (
            "Desk-Sharing im Office",
            "Jeder sucht sich morgens einen freien Tisch und räumt ihn abends wieder leer.",
        ),
    ),
]

TOPICS: list[Topic] = [
    # --- same topic: a person would merge these --------------------------------------
    Topic(
        "de-t-staging-ci",
        "de",
        "paraphrase",
        True,
        (
            (
                "Staging-Deployments brauchen eine grüne Pipeline",
                "Nur Builds mit erfolgreicher Pipeline dürfen auf Staging.",
            ),
            (
                "Ohne bestandene CI kommt nichts auf Staging",
                "Schlägt ein Test fehl, wird die Vorabumgebung nicht aktualisiert.",
            ),
            (
                "Vor einem Staging-Release muss die CI durchlaufen",
                "Erst wenn alle Checks durch sind, darf man auf die Testumgebung ausrollen.",
            ),
        ),
    ),
    Topic(
        "de-t-kein-freitagsdeploy",
        "de",
        "paraphrase",
        True,
        (
            (
                "Freitags wird nicht deployt",
                "Am Freitag gehen keine Änderungen in Produktion, damit am Wochenende niemand "
                "nachbessern muss.",
            ),
            (
                "Kein Release vor dem Wochenende",
                "Am letzten Arbeitstag der Woche spielen wir nichts mehr live ein.",
            ),
        ),
    ),
    Topic(
        "de-t-pii-logs",
        "de",
        "paraphrase",
        True,
        (
            (
                "Keine personenbezogenen Daten in Logs",
                "Namen, E-Mail-Adressen und IP-Adressen haben in Logausgaben nichts zu suchen.",
            ),
            (
                "PII vor dem Protokollieren maskieren",
                "Bevor etwas geschrieben wird, ersetzt der Logger Kundendaten durch Platzhalter.",
            ),
            (
                "Logging muss DSGVO-konform sein",
                "Aus einer Logzeile darf sich keine Person identifizieren lassen.",
            ),
        ),
    ),
    Topic(
        "de-t-migration-kompatibel",
        "de",
        "paraphrase",
        True,
        (
            (
                "Datenbankmigrationen müssen abwärtskompatibel sein",
                "Eine Migration darf die aktuell laufende Version des Dienstes nicht kaputtmachen.",
            ),
            (
                "Schemaänderungen so bauen, dass alter Code weiterläuft",
                "Während des Rollouts arbeitet die Vorgängerversion noch gegen dieselben Tabellen; "
                "Änderungen am Schema müssen das aushalten.",
            ),
        ),
    ),
    Topic(
        "de-t-urlaub-kalender",
        "de",
        "paraphrase",
        True,
        (
            (
                "Urlaub im Teamkalender eintragen",
                "Bitte jeden Urlaub in den Teamkalender eintragen.",
            ),
            (
                "Abwesenheiten für alle sichtbar machen",
                "Wer frei hat, vermerkt das im geteilten Kalender, damit die Sprintplanung stimmt.",
            ),
        ),
    ),
    Topic(
        "de-t-lizenzpruefung",
        "de",
        "paraphrase",
        True,
        (
            (
                "Neue Bibliotheken nur nach Lizenzprüfung",
                "Eine Library kommt erst ins Projekt, wenn ihre Lizenz geprüft ist.",
            ),
            (
                "Bevor ein Paket dazukommt, schaut jemand auf die Lizenz",
                "GPL und Ähnliches wollen wir nicht versehentlich einbinden.",
            ),
            (
                "Drittanbieter-Abhängigkeiten brauchen einen Lizenz-Check",
                "Ohne geklärte Lizenzbedingungen wird keine externe Dependency hinzugefügt.",
            ),
        ),
    ),
    Topic(
        "de-t-prio1-eskalation",
        "de",
        "paraphrase",
        True,
        (
            (
                "Prio-1-Tickets sofort an die Bereitschaft eskalieren",
                "Kritische Supportfälle gehen ohne Umweg an die Person in Rufbereitschaft.",
            ),
            (
                "Bei Totalausfall ruft der Support direkt den Diensthabenden an",
                "Wenn Kunden gar nicht mehr arbeiten können, telefoniert das Supportteam sofort "
                "mit dem On-Call.",
            ),
        ),
    ),
    Topic(
        "de-t-app-crashes-sentry",
        "de",
        "paraphrase",
        True,
        (
            (
                "Fehler der Mobile-App landen in Sentry",
                "Crashes und Exceptions aus der App werden an Sentry gemeldet.",
            ),
            (
                "Absturzberichte der App: Sentry",
                "Stürzt die iOS- oder Android-App ab, schickt das SDK den Report an unser "
                "Sentry-Projekt.",
            ),
        ),
    ),
    Topic(
        "de-t-betriebsferien",
        "de",
        "paraphrase",
        True,
        (
            (
                "Büro zwischen den Jahren geschlossen",
                "Zwischen Weihnachten und Neujahr bleibt das Büro zu.",
            ),
            (
                "Betriebsferien 24.12. bis 1.1.",
                "Vom 24. Dezember bis einschließlich 1. Januar hat das Office nicht geöffnet.",
            ),
        ),
    ),
    Topic(
        "de-t-zeitstempel-utc",
        "de",
        "paraphrase",
        True,
        (
            (
                "Alle Zeitstempel in UTC speichern",
                "In der Datenbank werden Zeitpunkte grundsätzlich in UTC abgelegt.",
            ),
            (
                "Keine lokale Uhrzeit in der DB",
                "Datums- und Zeitwerte persistieren wir als koordinierte Weltzeit; umgerechnet "
                "wird erst im Frontend.",
            ),
        ),
    ),
    Topic(
        "de-t-hardware-bestellen",
        "de",
        "paraphrase",
        True,
        (
            (
                "Hardware bestellt man über das IT-Ticketportal",
                "Bestellungen für Geräte laufen über das Ticketportal der IT.",
            ),
            (
                "Neuer Monitor oder Tastatur? Ticket bei der IT",
                "Wer Zubehör für den Arbeitsplatz braucht, legt bei der IT eine Anfrage an.",
            ),
        ),
    ),
    Topic(
        "de-t-api-version-pfad",
        "de",
        "duplicate",
        True,
        (
            (
                "API-Versionen stehen im URL-Pfad",
                "Die Version der REST-API ist Teil des Pfads.",
            ),
            (
                "Version der REST-API im Pfad",
                "Die REST-API wird über den Pfad versioniert, z. B. /v2/orders.",
            ),
        ),
    ),
    Topic(
        "de-t-image-tags",
        "de",
        "duplicate",
        True,
        (
            (
                "Images werden mit dem Git-Commit-Hash getaggt",
                "Jedes Docker-Image bekommt den kurzen Commit-Hash als Tag.",
            ),
            (
                "Docker-Images tragen den Commit-Hash als Tag",
                "Als Image-Tag verwenden wir den Git-Commit-Hash, nicht latest.",
            ),
        ),
    ),
    Topic(
        "de-t-bueroschluessel",
        "de",
        "duplicate",
        True,
        (
            (
                "Büroschlüssel gibt es bei Frau Weber am Empfang",
                "Schlüssel und Transponder fürs Büro gibt Frau Weber am Empfang aus.",
            ),
            (
                "Schlüssel fürs Büro bei Frau Weber abholen",
                "Den Büroschlüssel holt man am Empfang bei Frau Weber ab.",
            ),
        ),
    ),
    Topic(
        "de-t-rohdaten-bucket",
        "de",
        "duplicate",
        True,
        (
            (
                "Rohdaten der Pipeline liegen im Bucket raw-events",
                "Unverarbeitete Events landen im S3-Bucket raw-events.",
            ),
            (
                "Rohe Events im S3-Bucket raw-events",
                "Die Pipeline legt die Rohdaten im S3-Bucket raw-events ab, bevor sie "
                "transformiert "
                "werden.",
            ),
        ),
    ),
    Topic(
        "de-t-changelog-pflicht",
        "de",
        "duplicate",
        True,
        (
            (
                "Jede Änderung braucht einen Changelog-Eintrag",
                "Zu jeder Änderung gehört ein Eintrag in CHANGELOG.md.",
            ),
            (
                "Changelog-Eintrag ist Pflicht für jeden PR",
                "Jeder PR muss einen Eintrag im Changelog mitbringen.",
            ),
            (
                "Ohne Eintrag in CHANGELOG.md wird nicht gemergt",
                "Fehlt der Changelog-Eintrag, wird der PR nicht gemergt.",
            ),
        ),
    ),
    # --- not one topic: keep apart ---------------------------------------------------
    Topic(
        "de-t-deploy-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Deploy-Logs liegen in Grafana",
                "Die Ausgaben aller Deploy-Jobs kann man im Grafana-Dashboard 'Deployments' "
                "nachlesen.",
            ),
            (
                "Produktionsdeployments startet nur das Ops-Team",
                "Den Knopf für Prod-Rollouts dürfen nur Mitglieder von Ops drücken.",
            ),
            (
                "Deployments in #releases ankündigen",
                "Vor jedem Rollout schreibt man kurz in den Slack-Kanal #releases, was rausgeht.",
            ),
        ),
    ),
    Topic(
        "de-t-backup-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Laptop-Backup per Time Machine",
                "Die Macs sichern sich per Time Machine stündlich auf das NAS im Serverraum.",
            ),
            (
                "Backup-Person in der Rufbereitschaft",
                "Als Backup für den Bereitschaftsdienst springt immer die zweite Person im Plan "
                "ein.",
            ),
            (
                "Backup-Codes des GitHub-Org-Accounts",
                "Die Backup-Codes für den Org-Owner-Account liegen ausgedruckt im Tresor.",
            ),
        ),
    ),
    Topic(
        "de-t-release-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Release-Notes schreibt das Produktteam",
                "Texte für die Release-Notes liefert das Produktmanagement, nicht die Entwickler.",
            ),
            (
                "Release-Branch am Sprintende abzweigen",
                "Am letzten Sprinttag wird release/x.y von main abgezweigt.",
            ),
            (
                "Release-Builds der App signiert der Runner",
                "Signierte Release-Builds der Mobile-App erzeugt der CI-Runner mit dem Keystore "
                "aus dem Secret-Store.",
            ),
        ),
    ),
    Topic(
        "de-t-pipeline-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Datenpipeline wird mit Airflow orchestriert",
                "Alle DAGs der Datenpipeline laufen in unserer Airflow-Instanz.",
            ),
            (
                "Fehlgeschlagene Pipeline-Tasks dreimal wiederholen",
                "Ein Task, der abbricht, wird automatisch bis zu drei Mal neu gestartet.",
            ),
            (
                "Aufbereitete Daten landen in BigQuery",
                "Die transformierten Tabellen schreibt die Pipeline ins Dataset analytics in "
                "BigQuery.",
            ),
        ),
    ),
    Topic(
        "de-t-token-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Partner-API-Tokens laufen nach einem Jahr ab",
                "Zugangstokens für Partner müssen jährlich neu ausgestellt werden.",
            ),
            (
                "Design-Tokens im Paket ui-tokens",
                "Farben, Abstände und Schriftgrößen kommen als Design-Tokens aus dem Paket "
                "ui-tokens.",
            ),
            (
                "Tokenizer der Suche trennt an Bindestrichen",
                "Der Tokenizer im Suchindex zerlegt Wörter an Bindestrichen, z. B. 'E-Bike'.",
            ),
        ),
    ),
    Topic(
        "de-t-buero-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "WLAN-Passwort hängt am Kühlschrank",
                "Das Passwort für das Gäste-WLAN steht auf einem Zettel am Kühlschrank.",
            ),
            (
                "Besprechungsraum Elbe hat einen Beamer",
                "Für Präsentationen ist der Raum Elbe im Erdgeschoss mit Beamer ausgestattet.",
            ),
            (
                "Pakete nimmt der Empfang bis 16 Uhr an",
                "Private und dienstliche Lieferungen nimmt der Empfang werktags bis 16 Uhr "
                "entgegen.",
            ),
        ),
    ),
    Topic(
        "de-t-abrechnung-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Rechnungen erzeugt der billing-worker",
                "Die Rechnungsdokumente erstellt der Dienst billing-worker aus den Bestelldaten.",
            ),
            (
                "Stornos bestätigt die Buchhaltung",
                "Eine Stornierung wird erst wirksam, wenn die Buchhaltung sie freigegeben hat.",
            ),
            (
                "Preise netto in Cent speichern",
                "Beträge liegen als Ganzzahl in Cent ohne Mehrwertsteuer in der Datenbank.",
            ),
        ),
    ),
    Topic(
        "de-t-cache-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "CI-Build-Cache liegt in S3",
                "Der Build-Cache der Pipelines wird in einem S3-Bucket zwischengespeichert.",
            ),
            (
                "Browser-Cache über Hash-Dateinamen invalidieren",
                "Statische Assets bekommen einen Hash im Dateinamen, damit der Browser-Cache bei "
                "Änderungen greift.",
            ),
            (
                "npm-Cache auf den Runnern leeren",
                "Ist der npm-Cache kaputt, hilft der manuelle Job clean-cache.",
            ),
        ),
    ),
    Topic(
        "de-t-mobile-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Die Mobile-App ist in React Native geschrieben",
                "iOS und Android teilen sich eine Codebasis in React Native.",
            ),
            (
                "Push-Benachrichtigungen über Firebase",
                "Pushes an die App verschicken wir über Firebase Cloud Messaging.",
            ),
            (
                "App-Übersetzungen pflegen wir in Lokalise",
                "Texte der App werden in Lokalise übersetzt und beim Build gezogen.",
            ),
        ),
    ),
    Topic(
        "de-t-sicherheit-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Pentest einmal jährlich durch externe Firma",
                "Einmal im Jahr prüft ein externer Dienstleister unsere Anwendung per "
                "Penetrationstest.",
            ),
            (
                "Sicherheitslücken an security@ melden",
                "Verdacht auf eine Schwachstelle bitte an security@firma.de schicken, nicht ins "
                "öffentliche Issue.",
            ),
            (
                "Dependabot scannt Abhängigkeiten",
                "Bekannte CVEs in Dependencies meldet Dependabot als Pull Request.",
            ),
        ),
    ),
    Topic(
        "de-t-ticket-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Support-Tickets bearbeiten wir in Zendesk",
                "Kundenanfragen kommen als Ticket in Zendesk an und werden dort beantwortet.",
            ),
            (
                "Tickets für die Sommerfeier bei Anna",
                "Eintrittskarten für die Betriebsfeier im Juli verteilt Anna aus dem Office-Team.",
            ),
            (
                "Bug-Tickets brauchen Reproduktionsschritte",
                "Ein Fehlerticket ohne Schritte zum Nachstellen wird zurück an den Ersteller "
                "gegeben.",
            ),
        ),
    ),
    Topic(
        "de-t-logging-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Logs im JSON-Format schreiben",
                "Alle Dienste geben strukturierte Logs als JSON auf stdout aus.",
            ),
            (
                "Log-Level in Produktion ist INFO",
                "DEBUG wird in Prod nur kurzfristig per Umgebungsvariable eingeschaltet.",
            ),
            (
                "Fluent Bit schickt die Logs an Loki",
                "Auf jedem Node sammelt Fluent Bit die Container-Ausgaben ein und leitet sie an "
                "Loki weiter.",
            ),
        ),
    ),
    Topic(
        "de-t-migration-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Migration nach Kubernetes für Q3 geplant",
                "Die verbliebenen VMs sollen im dritten Quartal in den Kubernetes-Cluster "
                "umziehen.",
            ),
            (
                "Migrationsskripte liegen unter db/migrations",
                "Neue Alembic-Skripte legt man im Verzeichnis db/migrations an.",
            ),
            (
                "Datenmigration der Altkunden macht Team Daten",
                "Die Übernahme der Bestandskunden aus dem alten ERP verantwortet das Datenteam.",
            ),
        ),
    ),
    Topic(
        "de-t-arbeitsplatz-hardware",
        "de",
        "complementary",
        False,
        (
            (
                "Zwei externe Monitore pro Arbeitsplatz",
                "Jeder Schreibtisch ist mit zwei 27-Zoll-Monitoren ausgestattet.",
            ),
            (
                "Laptops werden nach vier Jahren ausgetauscht",
                "Nach vier Jahren Nutzung bekommt man automatisch ein neues Gerät.",
            ),
            (
                "Defekte Geräte repariert Bechtle",
                "Kaputte Hardware schicken wir zur Reparatur an unseren Dienstleister Bechtle.",
            ),
        ),
    ),
    Topic(
        "de-t-api-fakten",
        "de",
        "complementary",
        False,
        (
            (
                "Öffentliche API mit OpenAPI 3.1 dokumentiert",
                "Die Spezifikation liegt als openapi.yaml im Repo und wird nach jedem Merge "
                "veröffentlicht.",
            ),
            (
                "API-Authentifizierung über OAuth2 Client Credentials",
                "Maschinen-Clients holen sich ein Access Token per Client-Credentials-Flow.",
            ),
            (
                "Paginierung mit Cursor statt Seitenzahlen",
                "Listen-Endpunkte liefern einen next_cursor; offset und page gibt es nicht.",
            ),
        ),
    ),
    Topic(
        "de-t-review-begriff",
        "de",
        "samewords",
        False,
        (
            (
                "Code-Reviews innerhalb eines Arbeitstags",
                "Wer als Reviewer eingetragen ist, sollte spätestens am nächsten Tag antworten.",
            ),
            (
                "Quartalsreview mit der Geschäftsführung im Januar",
                "Das Review der Quartalsziele mit der GF findet in der zweiten Januarwoche statt.",
            ),
            (
                "Design-Reviews finden in Figma statt",
                "Entwürfe kommentiert das Team direkt in Figma statt per Mail.",
            ),
        ),
    ),
]
