"""Words that label a secret in thirteen languages, and the words that link a label to its value.

Each label is a lower-case regex fragment (the text is folded before searching) with how it
may be glued to other letters: German and Dutch build compounds ("Datenbankpasswort",
"Zugriffstoken"), Slavic and Turkish inflect ("паролем", "hasłem", "şifreniz"), and CJK has
no spaces at all, so a CJK label is matched anywhere and only its next character is checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "ADVERB_WORDS",
    "AS_WORDS",
    "CJK",
    "CJK_CONNECTOR_RE",
    "CJK_LETTER_RE",
    "CONNECTOR_WORDS",
    "DEVICE_PIN",
    "ENTRIES",
    "LABEL_RE",
    "LOGIN",
    "NEGATING_RE",
    "PASSPHRASE",
    "PASSWORD",
    "PASSWORD_KINDS",
    "PIN",
    "PIN_QUALIFIER_RE",
    "PREPOSITION_WORDS",
    "RECOVERY",
    "USER",
    "WIFI",
    "Label",
    "label_for",
]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


PASSWORD = "password"
PASSPHRASE = "passphrase"
PIN = "PIN"
TOKEN = "token"
SECRET = "secret"
API_KEY = "API key"
ACCESS_KEY = "access key"
PRIVATE_KEY = "private key"
SECRET_KEY = "secret key"
LOGIN = "login password"
RECOVERY = "recovery code"
DEVICE_PIN = "card or device PIN"  # a password label qualified by a card or a lock
WIFI = "Wi-Fi password"  # read like a login: "network / password"
USER = "user name"  # names no secret itself; only "user: alice / s3cret" gives a password
PASSWORD_KINDS = frozenset({PASSWORD, PASSPHRASE, LOGIN})

#: CJK scripts, punctuation and full-width forms (a regex character range): no spaces
#: separate their words, so a value ends where they resume.
CJK = (
    "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uff00-\uffef"
)
#: A letter of Chinese, Japanese or Korean, which no typed value contains.
CJK_LETTER_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True, slots=True)
class Label:
    """How one lexicon entry names a secret and how it may attach to neighbouring letters."""

    kind: str
    compound: bool = False  # letters may come before it ("Datenbank|passwort")
    suffix: int = 0  # at most this many letters may follow it (inflection, plural)
    script: str = "latin"  # "latin" (word boundaries), "zh", "ja" or "ko"
    # An abbreviation that is also other things ("pw", "pwd", "pass"): it labels a value only
    # through a connector ("pass: x", "pw is x"), never by being next to one.
    weak: bool = False
    # A code that opens a door, a gate or a building: its value may be short and mix digits
    # with a letter ("6182D", "GWSA-ZBHO"), which no password rule would pass.
    code: bool = False


_SPACE_RE = re.compile(r" (?![^\[]*\])")


def _latin(
    kind: str, *patterns: str, compound: bool = False, suffix: int = 0, code: bool = False
) -> list[tuple[str, Label]]:
    # Words of a label may be joined by "_" or "-" in keys ("mot_de_passe", "api-key").
    label = Label(kind, compound, suffix, code=code)
    return [(_SPACE_RE.sub("[ _-]", p), label) for p in patterns]


def _cjk(kind: str, script: str, *patterns: str, code: bool = False) -> list[tuple[str, Label]]:
    return [(p, Label(kind, script=script, code=code)) for p in patterns]


_KEY_SEP = r"[ _-]?"

_ENTRIES: list[tuple[str, Label]] = [
    # English (also the loanwords most languages use: token, PIN, API key, password)
    *_latin(
        PASSWORD, "password", "passwd", "passcode", "passwort", "kennwort", compound=True, suffix=2
    ),
    *_latin(PASSWORD, "passwörter", "kennwörter", compound=True, suffix=1),
    *_latin(PASSWORD, "pass word", suffix=1),  # "pass-word:", "pass_word ="
    *_latin(PASSPHRASE, "passphrase", "pass phrase", compound=True, suffix=1),
    *_latin(PASSPHRASE, "passwortsatz", "kennwortsatz", compound=True, suffix=1),
    *_latin(PASSPHRASE, "seed phrase", "recovery phrase", "secret phrase", suffix=1),
    *_latin(PASSWORD, "access code", "entrance code", "building code", suffix=1, code=True),
    # Wi-Fi keys as routers and phones print them: "Network key", "WPA2 key", "WLAN-Schlüssel"
    *_latin(
        PASSWORD,
        "network key",
        "network security key",
        "wpa2? key",
        "wpa2?-psk",
        "wep key",
        "wi-?fi key",
        suffix=1,
    ),
    *_latin(
        PIN,
        "code (?:for|to|of) the (?:front |back |main |garage |building )?(?:door|gate|alarm|safe)",
        "combination (?:for|to|of) the (?:safe|lock|padlock|locker)",
        "(?:safe|lock|padlock|locker) combination",
        suffix=0,
        code=True,
    ),
    ("pw", Label(PASSWORD, weak=True)),
    ("pwd", Label(PASSWORD, weak=True)),
    ("pass", Label(PASSWORD, weak=True)),
    ("ww", Label(PASSWORD, weak=True)),  # Dutch "wachtwoord"
    ("пасс", Label(PASSWORD, weak=True)),  # Russian slang
    # Chat shorthand: "psw", "pswd", "pword" (en, it), "kw" (German "Kennwort"), "contra"
    # (Spanish "contraseña"), "passw", "パス" (Japanese, also "path": a connector is needed).
    ("psw", Label(PASSWORD, weak=True)),
    ("pswd", Label(PASSWORD, weak=True)),
    ("pword", Label(PASSWORD, weak=True)),
    ("passw", Label(PASSWORD, weak=True)),
    ("kw", Label(PASSWORD, weak=True)),
    ("contra", Label(PASSWORD, weak=True)),
    ("パス", Label(PASSWORD, script="ja", weak=True)),
    *_latin(PIN, "pin", "pin code", "pin number", "pin-code", "pincode", "pin-kode", suffix=1),
    # Turkish possessives ("pin kodum", "pin kodunuz"), the Russian bare "пин" and its cases.
    *_latin(PIN, "pin kodu", "pin numarası", "pin numarasi", suffix=3),
    *_latin(PIN, "karten-pin", "kaart-pin", "card-pin", compound=True, suffix=0),  # "EC-Karten-PIN"
    *_latin(PIN, "пин", "пина", "пину", "пином", "pin-код", "pin код", suffix=0),
    # Phone and device unlock codes are PINs in all but name ("unlock code", "lock pin").
    # Labels are matched from a letter the lexicon already starts with where a compound
    # allows it ("un|lock code", "Ent|sperrcode"): each new first letter slows every scan.
    *_latin(PIN, "lock code", "lock pin", compound=True, suffix=1),
    # Codes that open a door, an alarm, a gate or a safe are PINs too ("the door code is
    # 4821", "Türcode", "digicode", "code de la porte"); a plain "code" is not a label.
    # Access codes ("Zugangscode", "code d'accès") are passwords of any shape, listed below.
    *_latin(
        PIN,
        "door code",
        "alarm code",
        "gate code",
        "garage code",
        "safe code",
        "keypad code",
        "entry code",
        "lockbox code",
        "türcode",
        "alarmcode",
        "tresorcode",
        "torcode",
        "deurcode",
        "kluiscode",
        "digicode",
        "tresorkombination",
        "kluiscombinatie",
        compound=True,
        suffix=1,
        code=True,
    ),
    *_latin(
        PIN,
        "code de la porte",
        "code de l'alarme",
        "code du coffre",
        "code du portail",
        "código de la puerta",
        "código del portal",
        "código de la alarma",
        "código de la caja fuerte",
        "codice della porta",
        "codice dell'allarme",
        "codice della cassaforte",
        "código da porta",
        "código do alarme",
        "código do cofre",
        "код двери",
        "код домофона",
        "код сигнализации",
        "код сейфа",
        "kod do drzwi",
        "kod domofonu",
        "kod do domofonu",
        "kod alarmu",
        "kod do sejfu",
        "kapı kodu",
        "alarm kodu",
        "kasa kodu",
        "kap[ıi]s[ıi](?:n[ıi]n)? kodu",
        # the code of an entrance, an intercom or a building, however phrased
        "code für (?:die |das |den )?(?:haustür|tür|tor|hoftor|garage|tresor|eingang)",
        "code de l'interphone",
        "code du bâtiment",
        "código de entrada",
        "código del edificio",
        "codice del citofono",
        "codice del portone",
        "código do portão",
        "código da portaria",
        "código do prédio",
        "code van de (?:voordeur|deur|poort|kluis|garage)",
        "poortcode",
        "kod wejściowy",
        "kod do wejścia",
        "bina (?:giriş )?kodu",
        # a safe's or a padlock's combination
        "kombination (?:des|für den|vom) (?:tresors?|safes?)",
        "combinaison du (?:coffre(?:-fort)?|cadenas)",
        "combinación de la caja fuerte",
        "combinación del candado",
        "combinazione (?:della |del |per la |per il )?(?:cassaforte|lucchetto)",
        "combinação do (?:cofre|cadeado)",
        "combinatie van de kluis",
        "kombinacj[aię] (?:do )?(?:sejfu|kłódki)",
        "szyfr do sejfu",
        "комбинаци[яюи] (?:от )?(?:сейфа|замка)",
        "kasa(?:nın)? kombinasyonu",
        suffix=0,
        code=True,
    ),
    # Codes a service prints once for account recovery; often listed on the lines below.
    *_latin(
        RECOVERY,
        "recovery codes?",
        "backup codes?",
        "wiederherstellungscodes?",
        "backup-codes?",
        "codes? de récupération",
        "codes? de secours",
        "códigos? de recuperación",
        "códigos? de respaldo",
        "codici di recupero",
        "codici di backup",
        "códigos? de recuperação",
        "herstelcodes?",
        "back-upcodes?",
        "коды? восстановления",
        "kody zapasowe",
        "kody? odzyskiwania",
        "kurtarma kodları",
        "kurtarma kodu",
        "codice di recupero",
        "notfallcodes?",
        # one code of a second factor's spares: "Backup 2FA code", "Резервный код", "yedek kodu"
        "backup (?:2fa |mfa |otp )?codes?",
        "2fa backup codes?",
        "codice di backup",
        "códigos? de backup",
        "резервн(?:ый|ые|ого|ых) код(?:ы|а|ов)?",
        "kody? zapasow[ye]",
        "yedek kod(?:u|ları|lari|lar)",
        suffix=0,
    ),
    # Wi-Fi: "Guest Wi-Fi: OfficeGuest / s3cret" names a network and its key, like a login.
    *_latin(WIFI, "wi-fi", "wifi", "wlan", suffix=0),
    *_latin(TOKEN, "token", compound=True, suffix=3),
    *_latin(SECRET, "secret", "client secret", compound=True, suffix=1),
    *_latin(SECRET_KEY, f"secret{_KEY_SEP}key", suffix=1),
    *_latin(API_KEY, f"api{_KEY_SEP}key", f"api{_KEY_SEP}token", suffix=1),
    *_latin(ACCESS_KEY, f"access{_KEY_SEP}key", suffix=1),
    *_latin(PRIVATE_KEY, f"private{_KEY_SEP}key", suffix=1),
    *_latin(SECRET_KEY, f"(?:en|de)cryption{_KEY_SEP}key", f"master{_KEY_SEP}key", suffix=1),
    *_latin(LOGIN, "login", "log-in", "sign-in", "credentials", "creds", "logins", suffix=0),
    *_latin(LOGIN, "inlog", "inloggen", "logowanie", "anmeldung", suffix=0),
    *_latin(LOGIN, "zugang", compound=True, suffix=0),  # "Serverzugang: admin / s3cret"
    *_latin(
        LOGIN,
        "учётка",
        "учетка",
        "учётн(?:ая|ой|ую) запис[ьи]",
        "учетн(?:ая|ой|ую) запис[ьи]",
        suffix=0,
    ),
    *_latin(
        USER,
        "user",
        "username",
        "user name",
        "benutzer",
        "benutzername",
        "utilisateur",
        "usuario",
        "usuário",
        "utente",
        "gebruiker",
        "gebruikersnaam",
        "пользователь",
        "użytkownik",
        "kullanıcı",
        "kullanici",
        "kullanıcı adı",
        suffix=0,
    ),
    *_latin(
        LOGIN,
        "zugangsdaten",
        "anmeldedaten",
        "logindaten",
        "identifiants?",
        "credenciales",
        "credenziali",
        "credenciais",
        "inloggegevens",
        "учетные данные",
        "учётные данные",
        "данные для входа",
        "dane logowania",
        "dane dostępowe",
        "giriş bilgileri",
        suffix=0,
    ),
    # German
    *_latin(
        PASSWORD,
        "zugangswort",
        "geheimwort",
        "losungswort",
        compound=True,
        suffix=1,
    ),
    *_latin(PASSWORD, "zugangscode", "eingangscode", compound=True, suffix=1, code=True),
    *_latin(PIN, "sperrcode", "sperr-pin", "sperrpin", compound=True, suffix=1),
    *_latin(ACCESS_KEY, "schlüssel", "schluessel", compound=True, suffix=2),
    *_latin(PIN, "geheimzahl", "geheimnummer", compound=True, suffix=1),
    # French
    *_latin(
        PASSWORD,
        "mot de passe",
        "mots de passe",
        "code wi-fi",
        "code wifi",
        "motdepasse",
        "mdp",
        suffix=0,
    ),
    *_latin(PASSWORD, "code d'accès", "code d’accès", suffix=0, code=True),
    *_latin(PIN, "code de déverrouillage", "code de deverrouillage", suffix=0),
    *_latin(PASSPHRASE, "phrase secrète", "phrase de passe", "phrase de récupération", suffix=0),
    *_latin(PIN, "code secret", "code confidentiel", suffix=0),
    *_latin(
        PIN,
        "code d'entrée",
        "code d’entrée",
        "code de l'immeuble",
        "code porte",
        "code portail",
        suffix=0,
        code=True,
    ),
    *_latin(PIN, "code (?:de )?(?:la |ma )?carte", suffix=0),
    *_latin(TOKEN, "jetons?", suffix=0),
    *_latin(ACCESS_KEY, "clés?", "clefs?", suffix=0),
    # Spanish
    *_latin(
        PASSWORD,
        "contraseñas?",
        "contrasenas?",
        "clave de acceso",
        suffix=0,
    ),
    *_latin(PASSWORD, "código de acceso", "codigo de acceso", suffix=0, code=True),
    *_latin(ACCESS_KEY, "claves?", suffix=0),
    *_latin(PIN, "código de desbloqueo", "codigo de desbloqueo", "código secreto", suffix=0),
    *_latin(
        PASSPHRASE,
        "frase de contraseña",
        "frase secreta",
        "frase de recuperación",
        "frase semilla",
        suffix=0,
    ),
    *_latin(SECRET, "secreto", suffix=0),
    # Italian
    *_latin(
        PASSWORD,
        "parola d'ordine",
        "parola d’ordine",
        suffix=0,
    ),
    *_latin(
        PASSWORD,
        "codice di accesso",
        "codice d'accesso",
        "codice d’accesso",
        "codice d'ingresso",
        "codice del cancello",
        suffix=0,
        code=True,
    ),
    *_latin(PASSPHRASE, "frase segreta", "frase di accesso", "frase di recupero", suffix=0),
    *_latin(PIN, "codice segreto", "codice del bancomat", suffix=0),
    *_latin(PIN, "codice di sblocco", suffix=0),
    *_latin(ACCESS_KEY, "chiavi", "chiave", suffix=0),
    *_latin(SECRET, "segreto", suffix=0),
    # Portuguese
    *_latin(PASSWORD, "senhas?", "palavras?[ -]passe", suffix=0),
    *_latin(PASSWORD, "código de acesso", "codigo de acesso", suffix=0, code=True),
    *_latin(PIN, "código de desbloqueio", "codigo de desbloqueio", suffix=0),
    *_latin(PASSPHRASE, "frase[ -]senha", "frase de recuperação", "frase-semente", suffix=0),
    *_latin(PASSPHRASE, "frase[ -]passe", suffix=0),
    *_latin(ACCESS_KEY, "chaves?", suffix=0),
    *_latin(SECRET, "segredo", suffix=0),
    # Dutch
    *_latin(PASSWORD, "wachtwoord", compound=True, suffix=2),
    *_latin(PASSWORD, "toegangscode", compound=True, suffix=2, code=True),
    *_latin(PASSPHRASE, "wachtzin", "herstelzin", compound=True, suffix=2),
    *_latin(PIN, "grendelcode", "grendelingscode", compound=True, suffix=1),
    *_latin(ACCESS_KEY, "sleutel", compound=True, suffix=2),
    # Russian (stems; endings are the inflection)
    *_latin(PASSWORD, "парол", suffix=3),
    *_latin(PASSWORD, "код доступа", "кода доступа", suffix=0, code=True),
    *_latin(
        PASSWORD,
        "кодовое слово",
        "кодового слова",
        "секретное слово",
        "секретного слова",
        suffix=0,
    ),
    *_latin(PASSPHRASE, "парольн(?:ая|ой|ую) фраз", "секретн(?:ая|ой|ую) фраз", suffix=2),
    *_latin(PASSPHRASE, "кодов(?:ая|ой|ую) фраз", suffix=2),
    *_latin(PASSPHRASE, "фраз[аыуой]{1,2} восстановления", "сид-фраз", suffix=2),
    *_latin(
        PIN,
        "код (?:от )?(?:домофона|двери|подъезда|сейфа|калитки|ворот|квартиры)",
        suffix=0,
        code=True,
    ),
    # Wi-Fi as Russians type it: "пароль от вайфая"
    *_latin(WIFI, "вай-?фа[йяюе]", suffix=2),
    *_latin(TOKEN, "токен", compound=True, suffix=3),
    *_latin(ACCESS_KEY, "ключ", suffix=3),
    *_latin(SECRET, "секрет", suffix=3),
    *_latin(PIN, "пин-код", "пин код", "пинкод", "код разблокировки", suffix=2),
    # Polish
    *_latin(PASSWORD, "hasł", "haseł", "hasl", "hasel", suffix=3),  # also typed without ł
    *_latin(ACCESS_KEY, "klucz", suffix=3),
    *_latin(SECRET, "sekret", suffix=3),
    *_latin(PIN, "kod odblokowania", "kod blokady", suffix=0),
    *_latin(PIN, "kod do (?:bramy|furtki|klatki|mieszkania)", suffix=0, code=True),
    *_latin(PASSWORD, "kod dostępu", "kodu dostępu", "kod dostepu", suffix=0, code=True),
    *_latin(PASSPHRASE, "fraz[aęy] (?:hasła|dostępu|odzyskiwania|seed)", suffix=0),
    # Turkish
    *_latin(PASSWORD, "şifre", "sifre", "parola", suffix=5),
    *_latin(ACCESS_KEY, "anahtar", suffix=5),
    # A final ç softens before a vowel ending: "belirteç", "belirteci".
    *_latin(TOKEN, "belirteç", "belirtec", suffix=3),
    *_latin(PIN, "kilit kodu", "kilit şifresi", "kilit sifresi", suffix=0),
    *_latin(
        PASSWORD, "erişim kodu", "erisim kodu", "giriş kodu", "giris kodu", suffix=3, code=True
    ),
    *_latin(PASSPHRASE, "kurtarma ifades", "gizli ifade", "parola ifades", "seed ifades", suffix=2),
    *_latin(PASSPHRASE, "şifre cümles", "sifre cumles", suffix=2),
    # Chinese
    *_cjk(PASSWORD, "zh", "密码", "密碼", "口令"),
    *_cjk(
        LOGIN, "zh", "凭据", "憑據", "凭证", "憑證", "登录信息", "登入資訊", "账号密码", "帳號密碼"
    ),
    *_cjk(TOKEN, "zh", "令牌", "授权码", "授權碼"),
    *_cjk(SECRET_KEY, "zh", "密钥", "密鑰", "秘钥", "祕鑰", "秘鑰"),
    *_cjk(PRIVATE_KEY, "zh", "私钥", "私鑰"),
    *_cjk(RECOVERY, "zh", "恢复码", "恢復碼", "备用码", "備用碼", "救援码"),
    *_cjk(PASSPHRASE, "zh", "助记词", "助記詞", "密码短语", "密碼短語", "口令短语"),
    *_cjk(RECOVERY, "zh", "备用代码", "備用代碼", "恢复代码", "备用验证码", "備用驗證碼"),
    *_cjk(PASSWORD, "zh", "访问码", "訪問碼", "门禁码", "門禁碼", code=True),
    # Japanese
    *_cjk(PASSWORD, "ja", "パスワード"),
    *_cjk(PIN, "ja", "暗証番号", "パスコード", "ロック解除コード"),
    *_cjk(RECOVERY, "ja", "リカバリーコード", "リカバリコード", "バックアップコード", "復旧コード"),
    *_cjk(LOGIN, "ja", "認証情報", "ログイン情報"),
    *_cjk(PASSPHRASE, "ja", "パスフレーズ", "リカバリーフレーズ", "シードフレーズ"),
    *_cjk(PASSWORD, "ja", "合言葉", "合い言葉"),
    *_cjk(PASSWORD, "ja", "アクセスコード", "入館コード", "ドアコード", code=True),
    *_cjk(PIN, "ja", "解除コード", "暗証コード", "警備コード", code=True),
    *_cjk(PIN, "ja", "金庫の番号", "金庫番号", "オートロックの番号", "オートロック番号", code=True),
    # Wi-Fi keys as routers print them
    *_cjk(PASSWORD, "ja", "暗号化キー", "ネットワークキー", "セキュリティキー"),
    *_cjk(SECRET_KEY, "ja", "シークレットキー", "秘密キー", "認証キー"),
    *_cjk(PRIVATE_KEY, "ja", "プライベートキー"),
    *_cjk(TOKEN, "ja", "トークン"),
    *_cjk(SECRET, "ja", "シークレット"),
    *_cjk(PRIVATE_KEY, "ja", "秘密鍵"),
    *_cjk(ACCESS_KEY, "ja", "アクセスキー", "apiキー", "api キー", "暗号鍵"),
    # Korean
    *_cjk(PASSWORD, "ko", "비밀번호", "비번", "패스워드", "암호"),
    *_cjk(LOGIN, "ko", "인증 정보", "로그인 정보"),
    *_cjk(TOKEN, "ko", "토큰"),
    *_cjk(SECRET, "ko", "시크릿"),
    *_cjk(SECRET_KEY, "ko", "비밀 키", "비밀키"),
    *_cjk(ACCESS_KEY, "ko", "액세스 키", "액세스키", "api 키", "api키"),
    *_cjk(PIN, "ko", "핀 번호", "핀번호"),
    *_cjk(RECOVERY, "ko", "복구 코드", "복구코드", "백업 코드", "백업코드"),
    *_cjk(PASSPHRASE, "ko", "복구 문구", "복구문구", "시드 문구", "시드문구", "니모닉"),
    *_cjk(PASSPHRASE, "ko", "비밀 문구", "비밀문구", "암호 문구", "패스프레이즈"),
    *_cjk(PIN, "ko", "해제 코드", "해제코드", "경비 코드", code=True),
    *_cjk(PASSWORD, "ko", "접속 코드", "출입 코드", "접근 코드", "액세스 코드", code=True),
    # "현관 도어락 번호": the number of a door lock or a safe is its code
    *_cjk(
        PIN, "ko", "도어락 번호", "현관 번호", "현관문 번호", "출입문 번호", "금고 번호", code=True
    ),
    *_cjk(SECRET_KEY, "ko", "암호화 키", "암호화키", "복호화 키", "복호화키"),
    *_cjk(SECRET_KEY, "ko", "인증키", "인증 키", "보안키", "보안 키"),
    *_cjk(PRIVATE_KEY, "ko", "개인키", "개인 키", "비공개 키"),
]

# Longest first, so "secret key" is preferred to "secret" where both match.  One plain
# alternation scans fast (named groups per entry would make it seventy times slower); the
# entry behind a match is looked up afterwards.
_ENTRIES.sort(key=lambda entry: -len(entry[0]))
#: Every label of the lexicon: (its regex fragment, its `Label`), longest fragment first,
#: the order in which `LABEL_RE` tries them.
ENTRIES: tuple[tuple[str, Label], ...] = tuple(_ENTRIES)


def _factor(patterns: list[str]) -> str:
    """One alternation with shared leading letters pulled out ("pass(?:word|phrase)").

    The regex engine tries every branch at every position; factored, a position that does
    not start a label fails on one branch instead of twenty.  Branch order is kept.
    """
    groups: dict[str, list[str]] = {}
    order: list[str] = []
    rest: list[str] = []
    for p in patterns:
        head = p[:1]
        literal = head.isalnum() or head in "'’ -"
        if not literal or p[1:2] in "?*+{":
            order.append("\0" + p)  # kept whole, in its place
            continue
        if head not in groups:
            groups[head] = []
            order.append(head)
        groups[head].append(p[1:])
    for key in order:
        if key.startswith("\0"):
            rest.append(key[1:])
            continue
        tails = groups[key]
        body = tails[0] if len(tails) == 1 else f"(?:{_factor(tails)})"
        rest.append(re.escape(key) + body)
    return "|".join(rest)


LABEL_RE = re.compile(_factor([p for p, _ in _ENTRIES]))
_COMPILED = tuple((re.compile(p), label) for p, label in _ENTRIES)


@lru_cache(maxsize=1024)
def label_for(matched: str) -> Label:
    """The lexicon entry behind a `LABEL_RE` match: the first that matches it whole."""
    for regex, label in _COMPILED:
        if regex.fullmatch(matched):
            return label
    raise LookupError("not a label")  # unreachable: LABEL_RE matched one of them


# Words before a password label that make it a card's or a device's PIN ("银行卡密码",
# "카드 비밀번호", "锁屏密码"), matched against the few characters before the label.
PIN_QUALIFIER_RE = re.compile(
    r"(?:卡|取款|支付|锁屏|鎖屏|解锁|解鎖|开机|開機|账户|帳戶|账号|口座|카드|잠금|계좌|통장|atm"
    r"|sim[ -]?card|card|sim|kart|kartı|karte|kaart|bankkarte"
    # what a door code opens: a front door, a door lock, a gate, a safe
    r"|门禁|門禁|玄関|オートロック|ドア|金庫|현관|도어락|출입문|대문|금고|kapı|kapi|door|tür"
    r"|porte|puerta|porta|portone|deur|drzwi|двери|домофона|подъезда|сейфа"
    r"|保险箱|保險箱|保险柜|保險櫃|大门|大門|kasa|kasanın|kasanin|kasamın) ?$"
)

# Words that link a label to its value.  After a copula or a colon the value may come a
# word or two later ("is now X"); after a preposition ("changed to X", "auf X geändert") only
# the very next word counts, since "send the password to admin01" names no password.
CONNECTOR_WORDS = _set(
    """
    is was are were ist lautet lauten war sind heißt heisst est était sont c'est devient es
    era son sea fue è sono é são foi zijn luidt это jest są brzmi — – - -> => → : = | is: be
    wird wordt sera serait sarà será seria będzie будет olacak 's ’s
    """
)
PREPOSITION_WORDS = _set(
    """
    to auf zu en pour a para naar на na als
    """
)

# "X as the password": the value comes before the label.
AS_WORDS = _set(
    """
    as als comme como come jako как качестве olarak
    """
)

ADVERB_WORDS = _set(
    """
    now still again just simply currently temporarily jetzt nun noch immer wieder aktuell
    maintenant toujours encore actuellement ahora todavía aún ora ancora adesso agora ainda
    nu nog steeds теперь сейчас всё ещё teraz nadal obecnie artık hâlâ şimdi
    the le la el il lo het
    """
)

# What may stand between a CJK label and its value: particles, copulas and "changed to".
CJK_CONNECTOR_RE = re.compile(
    r"是|为|為|改成|改为|改為|设为|設為|设置为|設置為|设成|換成|换成|更改为|变成|變成|:|=|\|"
    r"|は|が|を|も|に変更|として|는|은|이|가|를|을|도|로|으로"
)

# Left context or filler that makes the value something else: a hash or checksum of the
# secret, a public key, an example, or a negation.
_NEGATING = (
    r"hash|checksum|digest|fingerprint|sha-?\d|md5|crc|commit|revision|public|öffentlich"
    r"|publique?|pública|público|pubblica|publieke|openbare|публичн|открыт|publiczn|açık anahtar"
    r"|example|beispiel|exemple|ejemplo|esempio|exemplo|voorbeeld|пример|przykład|örnek"
    r"|e\.g\.|z\.b\.|z\. b\.|p\.ex\.|prüfsumme|empreinte|huella|impronta|хеш|хэш|skrót"
    r"|哈希|校验|校驗|指纹|指紋|摘要|公钥|公鑰|示例|例如"
    r"|ハッシュ|チェックサム|公開鍵|例えば|해시|체크섬|공개 ?키|예시"
    # words about a password rather than the password: its policy, length, hint
    r"|polic|richtlinie|politique|política|politica|beleid|политик|polityk|politika"
    r"|策略|规则|規則|ポリシー|정책|requirement|anforderung|exigence|requisito|vereiste"
    r"|hint(?!e)|hinweis|indice|pista|suggeriment|dica|hinweis|подсказк|podpowied|ipucu|提示|ヒント|힌트"
)
NEGATING_RE = re.compile(_factor(_NEGATING.split("|")))
