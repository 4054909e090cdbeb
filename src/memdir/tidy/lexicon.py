"""Word lists for the contradiction detector: roles of function words in en, de, fr, es, zh
and ja."""

from __future__ import annotations

from enum import Enum

__all__ = [
    "BOUND_WORDS",
    "CJK_NUMERALS",
    "CONTRAST_CLASSES",
    "JA_KANA_ROLES",
    "JA_MUST_ENDINGS",
    "JA_NEGATIVE_ENDINGS",
    "JA_NOT_NEGATIVE",
    "LATIN_ROLES",
    "MONTHS",
    "PERIOD_WORDS",
    "STEM_LANGUAGE_HINTS",
    "UNITS",
    "VALUE_VERBS",
    "WEEKDAYS",
    "ZH_ROLES",
    "ZH_WORD_MAX",
    "Role",
]


class Role(Enum):
    """What a word does in a statement."""

    STOP = "stop"  # a function word: neither key nor value
    NEG = "neg"  # flips polarity: not, never, nicht, 不
    ALWAYS = "always"  # marks a polar claim without flipping it
    POS = "pos"  # a yes-like value: enabled, allowed, ja, 开启
    NEGB = "negb"  # a no-like value: disabled, forbidden, nein, 关闭
    USE = "use"  # its object is a choice: use X, verwenden X, 使用X
    RUN = "run"  # "runs" + on/auf/mit: its object is a choice too
    SWITCH = "switch"  # switched/migrated: "from X to Y" keeps only Y
    FROM = "from"
    TO = "to"
    HIST = "hist"  # used to, früher, 以前: the claim is about the past
    NOW = "now"  # now, jetzt, 现在: what follows is the current claim
    INSTEAD = "instead"  # instead of X: X is not a value of the statement
    COPULA = "copula"  # is, ist, 是: a short clause-final object is a value
    PERIOD = "period"  # every, alle, 每: the following duration is a period
    BETWEEN = "between"  # between X and Y: a range
    RANGE = "range"  # to, bis, -, 到: joins two numbers into a range
    TITLE = "title"  # Mr, Frau: not part of a name's value
    KEY = "key"  # a word of its own (shields a longer CJK word from its parts)


def _words(role: Role, text: str) -> dict[str, Role]:
    return {w: role for w in text.split()}


def _split(text: str) -> list[str]:
    return text.split()


_EN_STOP = """
a an the this that these those some any each all both it its they them their we our us you
your i me my he him his she her who which what whose there here of in on at by for with about
as into onto over under after before during per from to than then so and or but if when while
be been being am was were has have had do does did will would shall should can could may might
must also just only very more most less least too again once same such own new get got
about around roughly approximately approx ca off
"""
_DE_STOP = """
der die das den dem des ein eine einer eines einem einen und oder aber wenn weil dass als wie
bei mit für fur von vom zu zum zur im in am an auf aus nach vor über unter um bis durch gegen
ohne sich wir ihr sie er es ich du man unser unsere uns euch hat haben hatte wird werden wurde
wurden sein seine war waren bin bist seid kann können muss müssen soll sollen darf dürfen
auch noch schon nur sehr mehr jeder jede jedes jeden alle allen etwa ungefähr circa rund
dieser diese dieses diesem diesen dort hier da so dann also zusätzlich bitte
"""
_FR_STOP = """
le la les l un une des du de d au aux et ou mais si que qui quoi dont où ce cet cette ces se
sa son ses leur leurs nous vous ils elles il elle on je tu en dans par pour sur sous avec chez
entre vers à a ont avons avez été être sera seront fait faire peut doit doivent ne n y
tous toutes tout toute chaque environ très plus aussi
"""
_ES_STOP = """
el la los las lo un una unos unas y o pero si que quien cual cuyo este esta estos estas ese
esa eso se su sus nuestro nuestra nosotros vosotros ellos ellas él ella yo tú en de del al
por para con sin? sobre entre hacia desde hasta ha han hemos ser sido fue son muy más también
cada todo todos toda todas aproximadamente unos alrededor
"""

LATIN_ROLES: dict[str, Role] = {}
for _text in (_EN_STOP, _DE_STOP, _FR_STOP, _ES_STOP):
    LATIN_ROLES.update(_words(Role.STOP, _text.replace("?", "")))
LATIN_ROLES.update(
    _words(
        Role.NEG,
        "not no never without nicht nie niemals kein keine keinen keinem keiner keines ohne "
        "pas jamais sans non nunca jamás sin",
    )
)
LATIN_ROLES.update(_words(Role.ALWAYS, "always immer stets toujours siempre"))
LATIN_ROLES.update(
    _words(
        Role.POS,
        "enabled enable true yes allowed permitted required mandatory active "
        "aktiviert aktiv eingeschaltet ja erlaubt zulässig gestattet erforderlich pflicht "
        "verpflichtend activé activée activés activées oui autorisé autorisée autorisés "
        "autorisées permis obligatoire obligatoires vrai habilitado habilitada activado "
        "activada sí permitido permitida permitidos obligatorio obligatoria verdadero",
    )
)
LATIN_ROLES.update(
    _words(
        Role.NEGB,
        "disabled disable false forbidden prohibited banned optional inactive "
        "deaktiviert ausgeschaltet nein verboten untersagt inaktiv désactivé désactivée "
        "désactivés désactivées interdit interdite interdits interdites facultatif faux "
        "deshabilitado deshabilitada desactivado desactivada prohibido prohibida prohibidos "
        "opcional falso",
    )
)
LATIN_ROLES.update(
    _words(
        Role.USE,
        "use uses using prefer prefers verwenden verwendet nutzen nutzt benutzen benutzt "
        "einsetzen setzen utiliser utilise utilisons utilisent utilisez usar usa usamos usan "
        "utilizar utiliza utilizamos utilizan",
    )
)
LATIN_ROLES.update(_words(Role.RUN, "runs run läuft laufen tourne tournent corre corren"))
LATIN_ROLES.update(
    _words(
        Role.SWITCH,
        "switched switch moved migrated migrate changed upgraded bumped umgestiegen "
        "umgestellt gewechselt gehoben aktualisiert actualizado actualizamos "
        "migriert umgezogen passé passés migré migrés changé pasamos migramos cambiamos "
        "cambió migrado",
    )
)
LATIN_ROLES.update(
    _words(
        Role.HIST,
        "previously formerly früher ehemals vorher auparavant autrefois anciennement antes "
        "anteriormente solíamos usábamos",
    )
)
LATIN_ROLES.update(
    _words(
        Role.NOW,
        "now nowadays jetzt nun inzwischen mittlerweile maintenant désormais ahora actualmente",
    )
)
LATIN_ROLES.update(_words(Role.INSTEAD, "instead rather statt anstatt anstelle lieu lugar vez"))
LATIN_ROLES.update(_words(Role.COPULA, "is are ist sind est sont es son está están"))
LATIN_ROLES.update(_words(Role.PERIOD, "every alle cada toutes tous"))
LATIN_ROLES.update(_words(Role.BETWEEN, "between zwischen entre"))
LATIN_ROLES.update(_words(Role.RANGE, "bis"))
LATIN_ROLES.update(
    _words(
        Role.TITLE,
        "mr mrs ms dr frau herr madame monsieur mme señor señora sr sra",
    )
)

#: Which Snowball stemmer a Latin statement uses: words that only one language has.
_HINT_LANGUAGES: dict[str, set[str]] = {}
for _lang, _text in (
    ("german", _DE_STOP + " ist sind nicht nie kein keine wird werden"),
    ("french", _FR_STOP + " est sont pas jamais"),
    ("spanish", _ES_STOP + " es está están nunca"),
    ("english", _EN_STOP + " is are not never"),
):
    for _w in _text.replace("?", "").split():
        _HINT_LANGUAGES.setdefault(_w, set()).add(_lang)
#: A function word naming the one language it belongs to (words two languages share,
#: such as "on" or "me", and words common in the others' text hint at nothing).
STEM_LANGUAGE_HINTS: dict[str, str] = {
    w: next(iter(langs)) for w, langs in _HINT_LANGUAGES.items() if len(langs) == 1
}
for _w in ("a", "de", "en", "la", "le", "die", "as", "an", "so", "in", "con", "es", "un"):
    STEM_LANGUAGE_HINTS.pop(_w, None)

# --- Chinese: matched longest first inside a run of CJK characters ---------------------------
ZH_ROLES: dict[str, Role] = {}
ZH_ROLES.update(
    _words(
        Role.STOP,
        "的 了 在 和 与 及 或 都 也 将 会 就 被 把 对 个 请 已 着 得 地 吗 呢 吧 啊 其 该 向 给 于 "
        "由 以 并 而 但 还 又 再 很 这 那 我们 你们 他们 他 她 它 每个 所有 进行 之间 一次 "
        "统一 大约 约 左右 本 后 时 有",
    )
)
ZH_ROLES.update(
    _words(
        Role.KEY,
        "不同 不错 不断 不过 不仅 无论 非常 用户 费用 作用 应用 可用 用于 是否 为了 以上 以下 "
        "以内 一致 一起 合并 上限 下限 十分 分支 分钟数 现场 过期 过去式 一些 有效期 负责人",
    )
)
ZH_ROLES.update(
    _words(
        Role.NEG,
        "不 没 没有 无 未 别 勿 不要 不能 不得 不可 从不 从来不 绝不 永不 不再 并非 非 不会",
    )
)
ZH_ROLES.update(_words(Role.ALWAYS, "总是 始终 一律 永远 一直 总"))
ZH_ROLES.update(_words(Role.POS, "开启 启用 打开 允许 必须 可以 激活 开着"))
ZH_ROLES.update(_words(Role.NEGB, "关闭 禁用 停用 禁止 可选 否 关着"))
ZH_ROLES.update(_words(Role.USE, "使用 用 采用 改用 选用 选择 运行在 跑在 基于"))
ZH_ROLES.update(
    _words(Role.SWITCH, "迁移到 迁移至 迁到 切换到 切换为 换成 改为 改成 转到 迁移 切换")
)
ZH_ROLES.update(_words(Role.FROM, "从"))
ZH_ROLES.update(_words(Role.HIST, "以前 原来 曾经 过去 早先 原先 之前"))
ZH_ROLES.update(_words(Role.NOW, "现在 目前 如今 当前"))
ZH_ROLES.update(_words(Role.INSTEAD, "而不是 而非 代替 取代"))
ZH_ROLES.update(_words(Role.COPULA, "是 为"))
ZH_ROLES.update(_words(Role.PERIOD, "每"))
ZH_ROLES.update(_words(Role.RANGE, "到 至"))
ZH_ROLES.update(_words(Role.TITLE, "先生 女士 老师"))
# Japanese kanji words (kana runs are read by `memdir.tidy.values`, see JA_KANA_ROLES)
ZH_ROLES.update(_words(Role.NOW, "現在 今"))
ZH_ROLES.update(_words(Role.USE, "採用"))
ZH_ROLES.update(_words(Role.KEY, "利用 社用 用意 用途 専用 使用料"))
ZH_ROLES.update(_words(Role.SWITCH, "移行 変更 切替"))
ZH_ROLES.update(_words(Role.NEGB, "無効 不可"))
ZH_ROLES.update(_words(Role.POS, "有効 必須 許可"))
ZH_ROLES.update(_words(Role.PERIOD, "毎"))

#: Runs of hiragana (particles, verb endings) are function words, but for these; a run
#: ending in a negative ending (ない, ません, ず) negates.
JA_KANA_ROLES: dict[str, Role] = {
    **_words(Role.STOP, "は が を に で の へ と も や か ね よ から まで です ます"),
    **_words(Role.FROM, "から"),
    **_words(Role.RANGE, "まで"),
    **_words(Role.COPULA, "です だ である"),
}
JA_NEGATIVE_ENDINGS = ("ない", "なかった", "ません", "ず", "ぬ")
#: Kana runs that end like a negation but are none: "first" (まず), the ず of 必ず
#: ("always"), and "must" (…なければならない).
JA_NOT_NEGATIVE = frozenset({"まず", "ず"})
JA_MUST_ENDINGS = (
    "なければならない", "なければいけない", "なくてはならない", "なくてはいけない",
    "ねばならない", "なければなりません", "なくてはなりません",
)  # fmt: skip

# --- values ------------------------------------------------------------------------------------
#: unit word -> (dimension, factor, factor under the other reading: binary vs decimal sizes)
UNITS: dict[str, tuple[str, float, float]] = {}


def _unit(dim: str, factor: float, words: str, alt: float | None = None) -> None:
    for w in words.split():
        UNITS[w] = (dim, factor, factor if alt is None else alt)


_unit(
    "time",
    0.001,
    "ms msec millisecond milliseconds millisekunde millisekunden milliseconde millisecondes "
    "milisegundo milisegundos 毫秒",
)
_unit(
    "time",
    1,
    "s sec secs second seconds sek sekunde sekunden seconde secondes segundo segundos 秒 秒钟",
)
_unit("time", 60, "m min mins minute minutes minuten minuto minutos 分钟 分間 分")
_unit("time", 900, "viertelstunde viertelstunden")
_unit("time", 3600, "h hr hrs hour hours std stunde stunden heure heures hora horas 小时 钟头 時間")
_unit("time", 86400, "d day days tag tage tagen jour jours día días dia dias 天 日間")
_unit("time", 604800, "week weeks woche wochen semaine semaines semana semanas 周 星期 週間")
_unit("time", 2592000, "month months monat monate monaten mois mes meses 个月 箇月")
_unit("time", 31536000, "year years jahr jahre jahren année années año años 年間")
_unit("size", 1, "b byte bytes octet octets 字节")
_unit("size", 1e3, "kb kilobyte kilobytes ko", 1024)
_unit("size", 1024, "kib")
_unit("size", 1e6, "mb megabyte megabytes mo meg megs mega megas", 1024**2)
_unit("size", 1024**2, "mib")
_unit("size", 1e9, "gb gigabyte gigabytes go gig gigs giga gigas", 1024**3)
_unit("size", 1024**3, "gib")
_unit("size", 1e12, "tb terabyte terabytes", 1024**4)
_unit("size", 1024**4, "tib")
_unit("percent", 1, "% percent prozent porcentaje")
_unit("rate", 1, "qps rps")  # requests (queries) per second
_unit("eur", 1, "€ eur euro euros")
_unit("usd", 1, "$ usd dollar dollars dólares")
_unit("cny", 1, "元 块")
_unit("jpy", 1, "円")

#: frequency words -> period in seconds
PERIOD_WORDS: dict[str, float] = {}
for _text, _seconds in (
    ("hourly stündlich 毎時", 3600.0),
    (
        "daily nightly täglich nächtlich quotidien quotidienne diario diaria diariamente "
        "每天 每日 每晚 毎日 毎晩 毎朝 毎夜",
        86400.0,
    ),
    ("weekly wöchentlich hebdomadaire semanal 毎週", 604800.0),
    ("fortnightly biweekly zweiwöchentlich quincenal 隔周 隔週", 1209600.0),
    ("monthly monatlich mensuel mensuelle mensual mensualmente 每月 毎月 月次", 2592000.0),
    (
        "quarterly vierteljährlich quartalsweise quartalsweisen trimestriel trimestrielle "
        "trimestriels trimestrielles trimestral trimestrales "
        "每季度 四半期毎",
        7776000.0,
    ),
    (
        "yearly annually annual jährlich jährliche alljährlich annuel annuelle annuellement "
        "anual anualmente 每年 毎年 年次",
        31536000.0,
    ),
):
    for _w in _text.split():
        PERIOD_WORDS[_w] = _seconds
        if _w.endswith("lich"):  # jährliche, wöchentlichen, monatlicher
            for _ending in ("e", "en", "er", "es", "em"):
                PERIOD_WORDS[_w + _ending] = _seconds
        if _w.endswith(("al", "ario", "aria")) and _w.isascii():  # anuales, diarias
            PERIOD_WORDS[_w + ("es" if _w.endswith("al") else "s")] = _seconds

#: weekday word -> day numbers (Monday = 0)
WEEKDAYS: dict[str, frozenset[int]] = {}
for _i, _text in enumerate(
    (
        "monday mondays montag montags lundi lundis lunes 周一 星期一 礼拜一 月曜 月曜日",
        "tuesday tuesdays dienstag dienstags mardi mardis martes 周二 星期二 礼拜二 火曜 火曜日",
        "wednesday wednesdays mittwoch mittwochs mercredi mercredis miércoles 周三 星期三 礼拜三 "
        "水曜 水曜日",
        "thursday thursdays donnerstag donnerstags jeudi jeudis jueves 周四 星期四 礼拜四 "
        "木曜 木曜日",
        "friday fridays freitag freitags vendredi vendredis viernes 周五 星期五 礼拜五 金曜 金曜日",
        "saturday saturdays samstag samstags sonnabend samedi samedis sábado sábados "
        "周六 星期六 礼拜六 土曜 土曜日",
        "sunday sundays sonntag sonntags dimanche dimanches domingo domingos "
        "周日 周天 星期日 星期天 礼拜天 日曜 日曜日",
    )
):
    for _w in _text.split():
        WEEKDAYS[_w] = frozenset({_i})
for _w in ("weekday", "weekdays", "werktags", "werktag", "工作日", "平日"):
    WEEKDAYS[_w] = frozenset(range(5))
for _w in ("weekend", "weekends", "wochenende", "周末", "週末", "土日"):
    WEEKDAYS[_w] = frozenset({5, 6})

#: month word -> month number
MONTHS: dict[str, int] = {}
for _i, _text in enumerate(
    (
        "january jan januar janvier enero",
        "february feb februar février febrero",
        "march mär märz mars marzo",
        "april apr avril abril",
        "may mai mayo",
        "june jun juni juin junio",
        "july jul juli juillet julio",
        "august aug août agosto",
        "september sep sept septembre septiembre",
        "october oct oktober okt octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember dez décembre diciembre",
    ),
    start=1,
):
    for _w in _text.split():
        MONTHS[_w] = _i

CJK_NUMERALS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "百": 100, "千": 1000, "万": 10000,
}  # fmt: skip

#: Words naming one of several parallel subjects: two statements whose differing words fall
#: in one class talk about different things ("staging uses 15", "prod uses 16").
CONTRAST_CLASSES: tuple[frozenset[str], ...] = tuple(
    frozenset(text.split())
    for text in (
        "staging stage prod production produktion dev development entwicklung test testing "
        "local lokal qa ci preprod sandbox 测试 生产 开发 预发 线上 本地 测试环境 生产环境 "
        "开发环境 producción pruebas 本番 本番環境 ステージング 検証 検証環境 開発 開発環境 "
        "テスト テスト環境 ローカル preproducción préprod recette",
        "linux windows macos mac ios android web mobile desktop 安卓 苹果 iphone",
        "frontend backend front back 前端 后端 client server フロントエンド バックエンド "
        "フロント バック",
        "read reads write writes lesen schreiben 读 写 lecture écriture lectura escritura",
        "internal external intern extern 内部 外部 interne externe",
        "old new alt alte alten neu neue neuen ancien nouveau antiguo nuevo 旧 新",
        "minimum maximum min max mindestens höchstens 最少 最多 最小 最大",
        "upload download 上传 下载",
        "beta 内测 other others andere anderen 其他 autres otros",
    )
)

for _class in CONTRAST_CLASSES:
    for _w in _class:
        if all("\u3400" <= ch <= "\u9fff" for ch in _w):
            ZH_ROLES.setdefault(_w, Role.KEY)

#: Verbs that say what happens to a value (kept, rotated, expired, run), not whose value it
#: is: two statements that differ only in such a verb ("certificates are renewed every 90
#: days" / "we swap certificates once a year") state rival values of one thing.
VALUE_VERBS = frozenset(
    " ".join(
        (
            "keep keeps kept retain retains retained store stores stored hold holds delete",
            "deleted purge purged expire expires expired rotate rotates rotated renew renews",
            "renewed replace replaced change changes changed swap swapped refresh refreshed",
            "behalten aufbewahren aufbewahrt speichern gespeichert löschen gelöscht tauschen",
            "erneuern erneuert wechseln gewechselt rotieren rotiert ersetzen ersetzt",
            "garder gardé gardés gardées conserver conservé conservés supprimer supprimés",
            "renouveler renouvelé renouvelés changer changé changent remplacer remplacé",
            "guardar guardan guarda conservar conservan borrar borran eliminar eliminan",
            "renovar renuevan cambiar cambian rotar rotan",
            "保 存 留 删 除 清 理 换 更 切 失 効 消 残 持",
        )
    ).split()
)

#: Words that make a value a bound or a span rather than the value itself, by direction:
#: "under 300 ms", "höchstens", "au plus", "como máximo", "最多" (upper); "at least 12",
#: "mindestens", "al menos", "以上" (lower); "between 2 and 5", "之间" (span); "over",
#: "超过" (either: a floor or a ceiling, as the sentence goes on to say).
BOUND_WORDS: dict[str, str] = {
    **dict.fromkeys(
        _split(
            "under below less fewer most max maximum within höchstens maximal unter weniger "
            "maximale maximalen bis sous moins maxi jusqu dessous máximo máxima menos hasta "
            "debajo 最多 最大 以内 以下 不超过 上限 未満 まで"
        ),
        "upper",
    ),
    **dict.fromkeys(
        _split(
            "least min minimum mindestens minimal minimale mínimo mínima 最少 最小 以上 至少 "
            "下限 最低"
        ),
        "lower",
    ),
    # "must stay above 99 %" sets a floor, "requests over 5000 are rejected" a ceiling
    **dict.fromkeys(
        _split(
            "above over exceed exceeds exceeding beyond über mehr au-delà dessus más encima 超过"
        ),
        "either",
    ),
    **dict.fromkeys(_split("between zwischen entre 之间"), "span"),
}

for _w in BOUND_WORDS:  # CJK bound words are words of their own for the CJK splitter
    if all("\u3400" <= ch <= "\u9fff" for ch in _w):
        ZH_ROLES.setdefault(_w, Role.KEY)

ZH_WORD_MAX = max(len(w) for w in (*ZH_ROLES, *UNITS, *WEEKDAYS, *PERIOD_WORDS))
