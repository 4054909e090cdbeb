"""Values as people write them, read by the contradiction detector: clock times in words,
days of the month, slash dates, how often, spelled numbers, units of other languages and
bounds. Each case is phrased apart from the labelled sets (tests/tidy/sets), so these check
the reading rules, not the sentences they were found on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.tidy.contradiction import find_contradiction, read_statement

_DAY = 86400.0
_WEEK = 7 * _DAY


def _clocks(text: str) -> tuple[int, ...]:
    statement = read_statement(text)
    assert statement is not None
    return statement.clocks


_EITHER = 12 * 60  # a time said without am/pm or a part of the day: either half of the day


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("The gym opens at half past six", (6 * 60 + 30, 6 * 60 + 30 + _EITHER)),
        ("Deploy window begins at quarter to eleven", (10 * 60 + 45, 10 * 60 + 45 + _EITHER)),
        ("The canteen closes at quarter past two in the afternoon", (14 * 60 + 15,)),
        ("Das Daily beginnt um halb zehn", (9 * 60 + 30, 9 * 60 + 30 + _EITHER)),
        ("Die Kantine schließt um halb drei nachmittags", (14 * 60 + 30,)),
        ("Viertel vor neun startet der Build", (8 * 60 + 45, 8 * 60 + 45 + _EITHER)),
        ("Le point d'équipe commence à neuf heures et demie", (9 * 60 + 30, 21 * 60 + 30)),
        ("On ferme à cinq heures et quart de l'après-midi", (17 * 60 + 15,)),
        ("Salimos a las seis y media de la tarde", (18 * 60 + 30,)),
        ("Nos vemos a las once", (11 * 60, 23 * 60)),
        ("Retro: cuatro de la tarde", (16 * 60,)),
        ("Standup at 9.45 every morning", (9 * 60 + 45,)),
        ("仓库晚9点关门", (21 * 60,)),
        ("早7点开始排队", (7 * 60,)),
    ],
)
def test_times_of_day_in_words(text: str, minutes: tuple[int, ...]) -> None:
    assert _clocks(text) == minutes


@pytest.mark.parametrize(
    "text",
    [
        "Keep the pool at 3",  # a count after "at", nothing says when
        "Bump the replicas to 4.50 if needed",
        "Python is pinned at 3.11",
        "We need half the budget",
        "La réunion dure 2 heures",
        "Un quart des tests échoue",
    ],
)
def test_counts_and_lengths_are_not_times_of_day(text: str) -> None:
    assert _clocks(text) == ()


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Payroll runs on the 25th", 25),
        ("Rent is due the 3rd of every month", 3),
        ("Die Miete wird am 3. jedes Monats abgebucht", 3),
        ("Le loyer part le 2 de chaque mois", 2),
        ("La nómina se paga el día 28", 28),
        ("Los informes salen el 10 de cada mes", 10),
        ("每月15号出账单", 15),
        ("毎月20日に締める", 20),
    ],
)
def test_a_day_of_the_month_without_its_month(text: str, day: int) -> None:
    statement = read_statement(text)
    assert statement is not None and statement.dates == ((0, 0, day),)


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("Release train leaves 09/11/2026", (2026, 11, 9)),
        ("Contract ends 11/30/2026", (2026, 11, 30)),
        ("Fin du support le 30/06/27", (2027, 6, 30)),
        ("Abnahme am 02.10.2026", (2026, 10, 2)),
        ("上线日期 2026/10/02", (2026, 10, 2)),
        ("We moved to GitLab in 2021", (2021, 0, 0)),
        ("Im Jahr 2019 sind wir auf Terraform umgestiegen", (2019, 0, 0)),
    ],
)
def test_written_dates_and_years(text: str, date: tuple[int, int, int]) -> None:
    statement = read_statement(text)
    assert statement is not None and statement.dates == (date,)
    assert statement.nums == ()


@given(st.integers(1, 28), st.integers(1, 12), st.integers(2000, 2099))
def test_a_slash_date_reads_day_first_unless_the_day_cannot_be_a_month(
    day: int, month: int, year: int
) -> None:
    statement = read_statement(f"Cutover on {day:02d}/{month:02d}/{year}")
    assert statement is not None
    assert statement.dates == ((year, month, day),)
    if day > 12:  # 13/05 can only be the 13th of May; 05/13 only May 13th
        flipped = read_statement(f"Cutover on {month:02d}/{day:02d}/{year}")
        assert flipped is not None and flipped.dates == ((year, month, day),)


def _period(text: str) -> tuple[float, float]:
    statement = read_statement(text)
    assert statement is not None
    periods = [(q.lo, q.hi) for q in statement.quantities if q.dim == "period"]
    assert len(periods) == 1, statement.quantities
    return periods[0]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Secrets are rotated once a quarter", 7776000.0 * 1),
        ("We patch twice a month", 2592000.0 / 2),
        ("Backups are tested three times a week", _WEEK / 3),
        ("Das Team trifft sich zweimal pro Woche", _WEEK / 2),
        ("Die Zertifikate erneuern wir einmal im Jahr", 31536000.0),
        ("Le cache est vidé deux fois par jour", _DAY / 2),
        ("On fait la revue une fois par semaine", _WEEK),
        ("Se actualiza una vez al mes", 2592000.0),
        ("Las copias se prueban cada 15 días", 15 * _DAY),
        ("Les clés tournent tous les 30 jours", 30 * _DAY),
        ("Audit annuel des accès", 31536000.0),
        ("Vierteljährliche Wartung", 7776000.0),
        ("Revisión trimestral de costes", 7776000.0),
    ],
)
def test_how_often(text: str, seconds: float) -> None:
    """The period, as an interval: a month is 28-31 days, a quarter 89-92, a year 365-366."""
    lo, hi = _period(text)
    assert lo * 0.999 <= seconds <= hi * 1.001
    assert hi / lo < 1.11


@pytest.mark.parametrize("count", [1, 2, 3, 4, 6, 12])
def test_times_a_period_and_every_period_agree(count: int) -> None:
    """'N times a day' and 'every 24/N hours' are one schedule."""
    often = read_statement(f"The sync job runs {count} times a day")
    every = read_statement(f"The sync job runs every {24 // count} hours")
    assert often is not None and every is not None
    (a,) = [q for q in often.quantities if q.dim == "period"]
    (b,) = [q for q in every.quantities if q.dim == "period"]
    assert a.compatible(b)


def _quantity(text: str) -> tuple[str, float]:
    statement = read_statement(text)
    assert statement is not None
    assert len(statement.quantities) == 1, statement.quantities
    q = statement.quantities[0]
    return q.dim, q.lo


@pytest.mark.parametrize(
    ("text", "dim", "value"),
    [
        ("Das Onboarding dauert dreiundzwanzig Tage", "time", 23 * _DAY),
        ("El piloto dura veinticinco días", "time", 25 * _DAY),
        ("La période d'essai est de huit semaines", "time", 8 * _WEEK),
        ("Ils gardent la sauvegarde sept jours", "time", 7 * _DAY),
        ("Approval takes one business day", "time", _DAY),
        ("Expect two full weeks for the audit", "time", 2 * _WEEK),
        ("El límite de subida es de 40 megas", "size", 40e6),
        ("Attachments over 3 gigs bounce", "size", 3e9),
        ("Gateway allows 200 QPS", "rate", 200.0),
        ("验证码十分钟内有效", "time", 600.0),
        ("キャッシュは30分で切れる", "time", 1800.0),
        ("审计记录保留两年", "time", 2 * 31536000.0),
        ("ログは半年残す", "time", 0.5 * 31536000.0),
        ("一時ファイルは14日で消える", "time", 14 * _DAY),
        ("監査ログは30日保存する", "time", 30 * _DAY),
        ("鍵は90日ごとに替える", "time", 90 * _DAY),
        ("网关限流每秒20次", "rate", 20.0),
        ("每分钟最多600个请求", "rate", 10.0),
    ],
)
def test_quantities_written_as_people_write_them(text: str, dim: str, value: float) -> None:
    got_dim, got = _quantity(text)
    assert got_dim == dim
    assert got == pytest.approx(value)


@pytest.mark.parametrize(
    "text",
    [
        "这个仓库有3个分支",  # branches, not minutes
        "大部分用户在用新版",
        "We keep 2 working copies",
        "2024年发布了新版",  # a year, not a length of time
        "毎月5日に請求する",  # the 5th, not five days
        "每天3点备份",  # a time of day
    ],
)
def test_words_that_only_look_like_units(text: str) -> None:
    statement = read_statement(text)
    assert statement is not None
    assert not [q for q in statement.quantities if q.dim in ("time", "rate")]


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("Las claves deben tener al menos 10 caracteres", "lower"),
        ("Il faut au moins 3 relecteurs", "lower"),
        ("Por lo menos dos aprobaciones", "lower"),
        ("Menos de 5 errores por hora", "upper"),
        ("Das Limit liegt bei 60/min", None),  # "min" is the unit here, not a minimum
        ("Rate limit sits at 120/min", None),
    ],
)
def test_bounds(text: str, bound: str | None) -> None:
    statement = read_statement(text)
    assert statement is not None and statement.bound == bound


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Support line closes at 18:00", "The phone line shuts at half past five in the afternoon"),
        ("Der Newsletter geht am 1. jedes Monats raus", "Newsletter-Versand: immer am 10."),
        ("Payroll is paid on the 25th", "Salaries land on the 28th of each month"),
        ("Les mots de passe changent tous les 60 jours", "Rotation des mots de passe : annuelle"),
        ("Zertifikate: alle 90 Tage erneuern", "Zertifikate tauschen wir einmal im Jahr aus"),
        ("Onboarding lasts twenty-one days", "The onboarding lasts four weeks"),
        ("Corte de código: 01/06/2026", "El corte de código es el 15 de junio"),
        ("The cluster runs Postgres 14", "Our database is PostgreSQL 16"),
        ("访问日志保存一年", "访问日志只留90天"),
        ("セッションは15分で切れる", "セッションの有効期限は1時間"),
        ("接口限流每分钟60次", "接口限流每秒10次"),
        ("La daily es a las nueve y media", "Daily: diez de la mañana"),
    ],
)
def test_rival_values_written_differently_clash(a: str, b: str) -> None:
    assert find_contradiction(a, b, related=True) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Support line closes at 18:00", "The phone line shuts at six in the evening"),
        ("Payroll is paid on the 25th", "Salaries land on the 25th of each month"),
        ("Zertifikate: alle 365 Tage erneuern", "Zertifikate tauschen wir einmal im Jahr aus"),
        ("Les sprints durent 15 jours", "Un sprint fait deux semaines"),
        ("On garde les traces huit jours", "Rétention des traces : une semaine"),
        ("Corte de código el 15/06/2026", "Congelamos el código el 15 de junio"),
        ("访问日志保存一年", "访问日志保留12个月"),
        ("Moved from MySQL to Postgres in 2022", "The main database is PostgreSQL 15"),
        ("We patch twice a month", "Patching happens every two weeks"),
        ("Das Team trifft sich zweimal pro Woche", "Wir treffen uns dienstags und freitags"),
        ("El piloto dura veinticinco días", "El piloto dura 25 días"),
    ],
)
def test_one_value_written_differently_does_not(a: str, b: str) -> None:
    assert find_contradiction(a, b, related=True) is None


def test_a_german_verb_ending_in_aus_is_not_off() -> None:
    statement = read_statement("Die Schlüssel tauschen wir jedes Jahr aus")
    off = read_statement("Die Funktion ist aus")
    assert statement is not None and statement.polarity == 1
    assert off is not None and off.polarity == -1


# -- from the hostile review of the value readers ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Since March 5, 3.12 is the default",
        "Am 5. Mai 3.12 eingeführt",
        "Le 5 mai 3.12 devient la version par défaut",
        "3月10,15日上线",
        "会议3点1,5分开始",
        "版本在3月1,2日发布",
        "On 1 June 1,50 EUR fees apply",
        "à 14h3. Ensuite",
    ],
)
def test_odd_numbers_beside_dates_and_clocks_never_raise(text: str) -> None:
    read_statement(text)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The page loads in 2000 ms", "The page loads in 3 s"),
        (
            "Die API erlaubt bis 2000 Anfragen pro Minute",
            "Die API erlaubt bis 5000 Anfragen pro Minute",
        ),
        ("The pool grows from 2000 connections", "The pool grows from 500 connections"),
        ("La copia empieza a las diez de la noche", "La copia empieza a las diez de la mañana"),
        ("The backup runs at 9 in the evening", "The backup runs at 9 in the morning"),
        ("The release is on the 3rd of May", "The release is on the 3rd of June"),
        ("Backups run twice daily", "Backups run once a day"),
        ("Reports go out weekly", "Reports go out twice a week"),
        ("Das Büro öffnet um acht Uhr", "Die Türen gehen um halb neun auf"),
        ("Passwörter brauchen mindestens 12 Zeichen", "Für Passwörter reichen acht Zeichen"),
    ],
)
def test_review_clashes_are_found(a: str, b: str) -> None:
    assert find_contradiction(a, b, related=True) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("We have used Postgres since 2019", "We still use Postgres in 2025"),
        ("Wir nutzen Kubernetes seit 2020", "Wir nutzen Kubernetes bis 2026"),
        ("The license is valid from 2024", "The license is valid until 2027"),
        ("Invoices are generated on the 1st", "Failed payments are retried on the 3rd attempt"),
        ("The team meets on the 2nd floor", "The team meets on the 15th"),
        ("Backups run twice a day", "Backups run daily at 2 am and 2 pm"),
        ("Reports go out twice a week", "Reports go out weekly, on Monday and Thursday"),
        ("接口每分钟最多100次请求", "接口每分钟80次请求"),
        ("Das Meeting beginnt um halb fünf", "Das Meeting beginnt um 16:30 Uhr"),
        ("The meeting starts at half past four", "The meeting starts at 16:30"),
        ("The review takes a quarter of an hour", "The review takes 15 minutes"),
        ("We run three replicas", "We run 3 replicas"),
    ],
)
def test_review_false_alarms_are_gone(a: str, b: str) -> None:
    assert find_contradiction(a, b, related=True) is None


def test_an_am_is_not_moved_by_a_later_pm() -> None:
    assert _clocks("Support is open 9 am to 5 pm") == (9 * 60, 17 * 60)
    assert _clocks("Backups at 2 am and 2 pm") == (2 * 60, 14 * 60)


def test_a_year_bound_is_no_date_and_a_year_with_a_unit_is_no_year() -> None:
    since = read_statement("We have used Postgres since 2019")
    seit = read_statement("Seit 2019 nutzen wir Terraform")
    loads = read_statement("The page loads in 2000 ms")
    assert since is not None and since.dates == () and since.nums == ()
    assert seit is not None and seit.dates == () and seit.nums == ()
    assert loads is not None and loads.dates == () and loads.quantities[0].lo == 2.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The sync runs at 12", "The sync runs at midnight"),
        ("The job runs at twelve", "The job runs at 00:00"),
        ("Backups run at 2", "Backups run at 14:00"),
    ],
)
def test_a_bare_hour_may_be_either_half_of_the_day(a: str, b: str) -> None:
    assert find_contradiction(a, b, related=True) is None
