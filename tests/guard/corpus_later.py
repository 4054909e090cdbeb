"""The ninth batch for the credential guard (`NINTH`, ids n9-*), kept apart from
`corpus_multilingual` for size.

Written unseen, without looking at detector code or earlier cases, and measured once at
recall 0.763 (before round 1), 0.786 (after round 1) and 0.844 / FPR 0.0028 (after round 2),
then tuned on in round 3.  Values are generated from seeds at import time; templates name the
value with %%name%% markers (one per positive; negatives only use neutral markers), so no
realistic credential is stored literally in the repository.
"""

from __future__ import annotations

import base64
import html as _html
import random
import re
import string
import urllib.parse

from .case import Case
from .corpus import ALNUM, B64, DIGITS, HEX, UPPER, URLSAFE, jwt, pem_body, tok, uuid
from .corpus_later_rows import ROWS

__all__ = ["NINTH"]

LOWER = string.ascii_lowercase
_WORDS9 = [
    "Harbor",
    "Maple",
    "Falcon",
    "Tornado",
    "Kiwi",
    "Ginger",
    "Cobalt",
    "Lantern",
    "Meadow",
    "Otter",
    "Quartz",
    "Saffron",
    "Tundra",
    "Violet",
    "Walnut",
    "Zephyr",
    "Pinecone",
    "Rhubarb",
    "Biscuit",
    "Comet",
    "Ember",
    "Fjord",
    "Glacier",
    "Hazel",
    "Juniper",
    "Koala",
    "Lemur",
    "Mango",
    "Nimbus",
    "Oregano",
    "Papaya",
    "Quokka",
    "Raven",
    "Sparrow",
    "Topaz",
    "Velvet",
    "Willow",
    "Kastanie",
    "Moewe",
    "Lavande",
    "Girasol",
    "Ulivo",
    "Caju",
    "Fiets",
    "Brzoza",
    "Lale",
    "Yuki",
    "Sora",
    "Namu",
    "Cactus",
    "Pepper",
]
_SYM9 = "!#$%&*?@_-+="


def _pw9(seed: str) -> str:
    rng = random.Random("pw9" + seed)
    w = [rng.choice(_WORDS9) for _ in range(3)]
    d = "".join(rng.choice(DIGITS) for _ in range(rng.randrange(2, 5)))
    s = rng.choice(_SYM9)
    style = rng.randrange(6)
    if style == 0:
        return f"{w[0]}{d}{s}"
    if style == 1:
        return f"{w[0]}.{w[1]}{d}"
    if style == 2:
        return f"{s}{w[0].lower()}{w[1]}{d}"
    if style == 3:
        leet = w[0].replace("a", "@").replace("o", "0").replace("e", "3")
        return f"{leet}_{w[1]}{d[:2]}"
    if style == 4:
        return tok("r" + seed, ALNUM + "#%!*", rng.randrange(12, 17))
    return f"{w[0]}{s}{w[1]}{s}{d}"


def _phrase9(seed: str) -> str:
    rng = random.Random("ph9" + seed)
    n = rng.choice((3, 4))
    sep = rng.choice("-._ ")
    words = [rng.choice(_WORDS9).lower() for _ in range(n)]
    if rng.random() < 0.5:
        words[-1] += "".join(rng.choice(DIGITS) for _ in range(2))
    return sep.join(words)


def _pin9(seed: str) -> str:
    rng = random.Random("pin9" + seed)
    while True:
        v = "".join(rng.choice(DIGITS) for _ in range(rng.choice((4, 4, 5, 6))))
        if len(set(v)) > 2:
            return v


def _code9(seed: str) -> str:
    rng = random.Random("code9" + seed)
    v = _pin9(seed)[:4]
    return v + rng.choice(("", "", "A", "B", "#", "*", "X"))


def _upw9(seed: str) -> str:
    v = _pw9(seed)
    return re.sub(r"[^A-Za-z0-9._-]", "", v) or tok(seed, ALNUM, 14)


def _pem9(seed: str, kind: str = "RSA PRIVATE KEY") -> str:
    return f"-----BEGIN {kind}-----\n{pem_body('n9pem' + seed, 5)}\n-----END {kind}-----"


def _recov9(seed: str) -> str:
    return tok("rc" + seed, LOWER + DIGITS, 5) + "-" + tok("rc2" + seed, LOWER + DIGITS, 5)


_GEN = {
    "pw": _pw9,
    "phrase": _phrase9,
    "pin": _pin9,
    "code": _code9,
    "upw": _upw9,
    "rnd": lambda s: tok("rnd9" + s, ALNUM + "!#%&*+=?", 18),
    "recov": _recov9,
    "bk": lambda s: tok("bk9" + s, DIGITS, 8),
    "ghp": lambda s: "ghp_" + tok("ghp9" + s, ALNUM, 36),
    "ghpat": lambda s: "github_pat_" + tok("gf9" + s, ALNUM, 22) + "_" + tok("gf9b" + s, ALNUM, 59),
    "xoxb": lambda s: (
        f"xoxb-{tok('x1' + s, DIGITS, 12)}-{tok('x2' + s, DIGITS, 13)}-{tok('x3' + s, ALNUM, 24)}"
    ),
    "akia": lambda s: "AKIA" + tok("ak9" + s, UPPER + "234567", 16),
    "awssec": lambda s: tok("aws9" + s, B64, 40),
    "sklive": lambda s: "sk_live_" + tok("skl9" + s, ALNUM, 24),
    "skproj": lambda s: "sk-proj-" + tok("skp9" + s, URLSAFE, 100),
    "glpat": lambda s: "glpat-" + tok("glp9" + s, URLSAFE, 20),
    "aiza": lambda s: "AIza" + tok("aiza9" + s, URLSAFE, 35),
    "jwt": lambda s: jwt("jwt9" + s),
    "bearer": lambda s: tok("bea9" + s, URLSAFE, 44),
    "hf": lambda s: "hf_" + tok("hf9" + s, ALNUM, 34),
    "anth": lambda s: "sk-ant-api03-" + tok("ant9" + s, URLSAFE, 93) + "AA",
    "npm": lambda s: "npm_" + tok("npm9" + s, ALNUM, 36),
    "sg": lambda s: "SG." + tok("sg9" + s, URLSAFE, 22) + "." + tok("sg9b" + s, URLSAFE, 43),
    "tg": lambda s: tok("tg9" + s, DIGITS, 10) + ":AA" + tok("tg9b" + s, URLSAFE, 33),
    "tok": lambda s: tok("tok9" + s, ALNUM, 32),
    "hexkey": lambda s: tok("hx9" + s, HEX, 40),
    "pem": _pem9,
    "sshkey": lambda s: _pem9(s, "OPENSSH PRIVATE KEY"),
}

_H = {
    "sha": tok("n9-sha", HEX, 40),
    "short": tok("n9-sha", HEX, 40)[:7],
    "hash": tok("n9-hash", HEX, 64),
    "md5": tok("n9-md5", HEX, 32),
    "uuid": uuid("n9-uuid"),
    "uuid2": uuid("n9-uuid2"),
    "img": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + tok("n9-img", B64, 72) + "==",
    "pub": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("n9-pub", B64, 43) + " dev@laptop",
    "pubpem": "-----BEGIN PUBLIC KEY-----\n"
    + pem_body("n9-pubpem", 3)
    + "\n-----END PUBLIC KEY-----",
    "order": "ORD-" + tok("n9-ord", DIGITS, 8),
    "inv": "2026-" + tok("n9-inv", DIGITS, 5),
    "track": "1Z" + tok("n9-trk", UPPER + DIGITS, 16),
    "iban": "DE" + tok("n9-iban", DIGITS, 20),
    "ibanfr": "FR76 " + " ".join(tok(f"n9-ibf{i}", DIGITS, 4) for i in range(5)) + " 123",
    "sri": "sha512-" + tok("n9-sri", B64, 86) + "==",
    "b64": base64.b64encode(b"Quarterly report: revenue up 4%, churn flat.").decode(),
}

_MARK = re.compile(r"%%(\w+)%%")


def _fill_pos(cid: str, template: str) -> tuple[str, str]:
    names = _MARK.findall(template)
    assert len(set(names)) == 1, (cid, names)
    value = _GEN[names[0]](cid)
    return template.replace(f"%%{names[0]}%%", value), value


def _fill_neg(template: str) -> str:
    return _MARK.sub(lambda m: _H[m.group(1)], template)


def _build(lang: str, pos: list[tuple[str, str]], neg: list[tuple[str, str]]) -> list[Case]:
    out: list[Case] = []
    for i, (kind, t) in enumerate(pos):
        cid = f"n9-{lang}-p{i:02d}-{kind}"
        text, secret = _fill_pos(cid, t)
        out.append(Case(cid, lang, kind, text, secret))
    for i, (kind, t) in enumerate(neg):
        out.append(Case(f"n9-{lang}-n{i:02d}-{kind}", lang, kind, _fill_neg(t)))
    return out


_CASES: list[Case] = []
for _lang, _pos, _neg in ROWS:
    _CASES += _build(_lang, _pos, _neg)

# --- pl ------------------------------------------------------------------------------------
_CASES += _build(
    "pl",
    [
        ("prose", "Hasło do panelu administracyjnego to %%pw%%, zmienimy je w piątek."),
        ("chat", "jakie jest hasło do wifi?\n%%pw%%"),
        ("prose", "PIN do karty: %%pin%%."),
        (
            "prose",
            "Cześć Kasia,\n\nprzesyłam dane dostępowe do systemu:\nlogin: k.nowak\nhasło: %%pw%%\n"
            "\nPozdrawiam,\nTomek",
        ),
        ("table", "| Usługa | Login | Hasło |\n|---|---|---|\n| Router | admin | %%pw%% |"),
        ("prose", "- serwer: sftp.biuro-rachunkowe.pl\n- użytkownik: faktury\n- hasło: %%rnd%%"),
        ("prose", "Hasło:\n%%pw%%"),
        ("prose", "Kod do domofonu to %%code%%."),
        ("prose", "Kod alarmu w magazynie: %%code%%"),
        ("config", "DB_PASSWORD=%%upw%%\nDB_USER=sklep"),
        ("url", "mysql://sklep:%%upw%%@db.hosting.pl:3306/sklep"),
        (
            "prose",
            "Notatka ze spotkania 2.12\n- token GitLaba do CI: %%glpat%%\n- urlopy do ustalenia",
        ),
        ("prose", "Kody zapasowe do konta:\n%%recov%%"),
        ("prose", "Klucz API OpenAI to `%%skproj%%`."),
        ("chat", "masz token do bota?\ntak: %%tg%%"),
        ("prose", "Fraza hasła do sejfu w menedżerze: %%phrase%%"),
        ("config", 'poczta:\n  użytkownik: biuro@firma.pl\n  hasło: "%%upw%%"'),
        ("prose", "Klucz prywatny serwera:\n%%pem%%"),
        ("prose", 'Hasło brzmi "%%pw%%".'),
        ("prose", "Kod zapasowy do weryfikacji dwuetapowej: %%bk%%"),
        ("prose", "Sejf w pokoju otwiera się kodem %%pin%%."),
        ("prose", "Sekretny klucz Stripe: %%sklive%%"),
    ],
    [
        ("prose", "Hasło musi mieć co najmniej 12 znaków."),
        ("prose", "Hasło jest w 1Password, wpis „Biuro / Router”."),
        ("prose", "Hasło: ******** (ukryte)"),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<twój-klucz>"),
        ("prose", "Kluczem do sukcesu jest systematyczność."),
        ("prose", "Dress code na wesele: elegancki."),
        ("chat", "jaki jest kod pocztowy biura?\n00-950"),
        ("prose", "Code review PR 58 przełożone na jutro."),
        ("prose", "Naprawione w commicie %%sha%%."),
        ("prose", "Suma kontrolna SHA-256: %%hash%%"),
        ("prose", "Numer zamówienia %%order%%, numer przesyłki %%track%%."),
        ("prose", "Faktura nr %%inv%%, kwota 1 230,00 zł."),
        ("prose", "Link do resetu hasła: https://konto.example.pl/reset"),
        ("prose", "Długość PIN-u: 4 cyfry."),
        ("prose", "Sala 3.21, tel. +48 22 123 45 67, 14 stycznia o 9:00."),
        ("prose", "Wersja 6.1.4 jest na produkcji."),
        ("prose", "ID zgłoszenia: %%uuid%%"),
        ("config", "Klucz publiczny:\n%%pub%%"),
        ("prose", "Znowu zapomniałem hasła, zrobiłem reset."),
        ("prose", "W dowód wdzięczności dostaliśmy bony."),
        ("prose", "Model obsługuje do 64 tys. tokenów."),
        ("config", 'hasło: "{{ haslo_db }}"'),
    ],
)

# --- tr ------------------------------------------------------------------------------------
_CASES += _build(
    "tr",
    [
        ("prose", "Yönetim panelinin şifresi %%pw%%, cuma günü değiştireceğiz."),
        ("chat", "wifi şifresi ne?\n%%pw%%"),
        ("chat", "apartman kapı kodu neydi?\n%%code%%"),
        ("prose", "Kartımın PIN kodu %%pin%%."),
        (
            "prose",
            "Merhaba Elif,\n\nportal erişim bilgileri aşağıda:\nkullanıcı adı: elif.yilmaz\n"
            "şifre: %%pw%%\n\nİyi çalışmalar,\nMehmet",
        ),
        ("table", "| Hizmet | Kullanıcı | Parola |\n|---|---|---|\n| Modem | admin | %%pw%% |"),
        ("prose", "- sunucu: sftp.muhasebe.com.tr\n- kullanıcı: fatura\n- parola: %%rnd%%"),
        ("prose", "Şifre:\n%%pw%%"),
        ("prose", 'Parola "%%pw%%" şeklinde, büyük harfe dikkat.'),
        ("prose", "Toplantı notları 3 Aralık\n- deploy için GitHub token: %%ghp%%\n- izin planı"),
        ("config", "# .env\nDB_PASSWORD=%%upw%%\nDB_USER=stok"),
        ("url", "Bağlantı: postgres://stok:%%upw%%@10.2.0.4:5432/stok"),
        ("prose", "Alarm kodu %%code%%, sonra KAPAT tuşuna bas."),
        ("prose", "Otel odasındaki kasanın şifresi %%pin%%."),
        ("prose", "Hesap kurtarma kodları:\n%%recov%%"),
        (
            "config",
            "[smtp]\nhost = smtp.yandex.com.tr\nuser = info@firma.com.tr\npassword = %%upw%%",
        ),
        ("prose", "Google Maps API anahtarı: `%%aiza%%`"),
        ("prose", "Parola ifadesi: %%phrase%%"),
        ("chat", "botun tokenını atar mısın?\nal: %%tg%%"),
        ("prose", "Sunucunun özel anahtarı:\n%%pem%%"),
        ("prose", "Stripe gizli anahtarı: %%sklive%%"),
        ("config", '{\n  "kullanici": "admin",\n  "sifre": "%%upw%%"\n}'),
        ("prose", "Header: Authorization: Bearer %%jwt%%"),
        ("prose", "İki adımlı doğrulama yedek kodu: %%bk%%"),
        ("prose", "Bahçe kapısının kodu %%code%%."),
        ("config", "machine git.sirket.com.tr\nlogin ci\npassword %%hexkey%%"),
        ("prose", "Slack bot tokenı: %%xoxb%%"),
        ("prose", "e-Devlet şifresi annemin: %%pw%% (değiştirmeyi unutma)"),
    ],
    [
        ("prose", "Şifre en az 12 karakter olmalı ve rakam içermeli."),
        ("prose", 'Şifre 1Password\'de, "Ofis / Modem" kaydında duruyor.'),
        ("prose", "Şifre: ******** (gizli)"),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<api-anahtarınız>"),
        ("prose", "Başarının anahtarı disiplindir."),
        ("prose", "Kıyafet kuralı: smart casual."),
        ("chat", "ofisin posta kodu ne?\n34394"),
        ("prose", "PR 88 için kod incelemesi yarın yapılacak."),
        ("prose", "%%sha%% numaralı commit'te düzeltildi."),
        ("prose", "SHA-256 sağlama toplamı: %%hash%%"),
        ("prose", "Sipariş numarası %%order%%, kargo takip no %%track%%."),
        ("prose", "Fatura no %%inv%%, tutar 4.750,00 TL."),
        ("prose", "Şifre sıfırlama bağlantısı: https://hesap.example.com.tr/sifirla"),
        ("prose", "PIN uzunluğu: 6 hane."),
        ("prose", "Toplantı odası 402, tel. 0212 123 45 67, 8 Ocak saat 10:00."),
        ("prose", "Sürüm 3.2.1 canlıda."),
        ("prose", "İstek kimliği: %%uuid%%"),
        ("config", "Açık anahtar:\n%%pub%%"),
        ("prose", "Şifremi yine unuttum, sıfırlama istedim."),
        ("prose", "Teşekkür nişanesi olarak ekibe hediye çeki verildi."),
        ("prose", "Model 128 bin token bağlam destekliyor."),
        ("config", 'password: "{{ vault_db_password }}"\ntoken: "token-buraya"'),
        ("prose", "Kaynak kodu GitLab'da, bağlantı wiki'de."),
        ("prose", "Fiyat: 899 TL, teslimat 18 Aralık."),
        ("prose", "Görsel: %%img%%"),
        ("prose", "Şifreleri asla WhatsApp'tan göndermeyin."),
        ("prose", "Kapı kodu değişti, yöneticiye sorun."),
        ("table", "| Alan | Değer |\n|---|---|\n| Kullanıcı | <kullanıcı> |\n| Şifre | <şifre> |"),
    ],
)
# --- zh ------------------------------------------------------------------------------------
_CASES += _build(
    "zh",
    [
        ("prose", "后台管理员密码是%%pw%%，周五之前别改。"),
        ("chat", "办公室的WiFi密码是多少？\n%%pw%%"),
        ("prose", "银行卡密码：%%pin%%"),
        (
            "prose",
            "王经理您好：\n\n系统账号信息如下：\n用户名：wangli\n密码：%%pw%%\n\n谢谢！\n张伟",
        ),
        ("table", "| 服务 | 账号 | 密码 |\n|---|---|---|\n| 路由器 | admin | %%pw%% |"),
        ("prose", "- 服务器：sftp.caiwu.cn\n- 用户：caiwu\n- 密码：%%rnd%%"),
        ("prose", "密码：\n%%pw%%"),
        ("prose", "小区门禁密码是%%code%%。"),
        ("prose", "仓库报警器密码：%%code%%"),
        ("config", "DB_PASSWORD=%%upw%%\nDB_USER=erp"),
        ("url", "mysql://erp:%%upw%%@10.10.1.8:3306/erp"),
        ("prose", "周会纪要 12月3日\n- 部署用的 GitHub token：%%ghp%%\n- 年假安排"),
        ("prose", "账号恢复码：\n%%recov%%"),
        ("prose", "OpenAI 的 API key 是 `%%skproj%%`。"),
        ("chat", "机器人的 token 发我一下\n给你：%%tg%%"),
        ("prose", "密码管理器的主密码短语：%%phrase%%"),
        ("config", 'mail:\n  user: service@shop.cn\n  password: "%%upw%%"'),
        ("prose", "服务器私钥：\n%%pem%%"),
        ("prose", "密码为“%%pw%%”，注意大小写。"),
        ("prose", "两步验证备用码：%%bk%%"),
        ("prose", "酒店保险箱密码是%%pin%%。"),
        ("prose", "阿里云 AccessKey Secret：%%awssec%%"),
    ],
    [
        ("prose", "密码长度至少12位，必须包含数字和字母。"),
        ("prose", "密码存在1Password里，条目“财务/路由器”。"),
        ("prose", "密码：********（已隐藏）"),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<你的密钥>"),
        ("prose", "成功的关键在于坚持。"),
        ("prose", "年会着装要求：商务休闲。"),
        ("chat", "公司的邮政编码是多少？\n100020"),
        ("prose", "PR 45 的代码评审明天进行。"),
        ("prose", "已在提交 %%sha%% 中修复。"),
        ("prose", "SHA-256 校验和：%%hash%%"),
        ("prose", "订单号 %%order%%，快递单号 %%track%%。"),
        ("prose", "发票号码 %%inv%%，金额 ¥3,680.00。"),
        ("prose", "重置密码链接：https://account.example.cn/reset"),
        ("prose", "PIN 码长度：6 位数字。"),
        ("prose", "会议室 1203，电话 010-8888 6666，1月9日上午10点。"),
        ("prose", "版本 2.3.0 已上线。"),
        ("prose", "请求 ID：%%uuid%%"),
        ("config", "公钥：\n%%pub%%"),
        ("prose", "我又忘了密码，只好重置。"),
        ("prose", "为表谢意，给每位同事发了购物卡。"),
        ("prose", "这个模型支持 128K token 的上下文。"),
        ("config", 'password: "{{ db_password }}"'),
    ],
)

# --- ja ------------------------------------------------------------------------------------
_CASES += _build(
    "ja",
    [
        ("prose", "管理画面のパスワードは%%pw%%です。金曜に変更予定。"),
        ("chat", "Wi-Fiのパスワード教えて\n%%pw%%"),
        ("chat", "マンションのオートロックの番号は？\n%%code%%"),
        ("prose", "キャッシュカードの暗証番号は%%pin%%。"),
        (
            "prose",
            "佐藤様\n\nお世話になっております。ポータルのログイン情報をお送りします。\nID：sato.k\nパスワード：%%pw%%\n\nよろしくお願いいたします。\n田中",
        ),
        (
            "table",
            "| サービス | ユーザー | パスワード |\n|---|---|---|\n| ルーター | admin | %%pw%% |",
        ),
        ("prose", "- サーバー：sftp.keiri.co.jp\n- ユーザー：keiri\n- パスワード：%%rnd%%"),
        ("prose", "パスワード：\n%%pw%%"),
        ("prose", "パスワードは「%%pw%%」です（大文字小文字に注意）。"),
        ("prose", "定例会議メモ 12/3\n- デプロイ用GitHubトークン：%%ghp%%\n- 年末休暇の調整"),
        ("config", "# .env\nDB_PASSWORD=%%upw%%\nDB_USER=app"),
        ("url", "接続文字列：postgresql://app:%%upw%%@10.0.3.9:5432/sales"),
        ("prose", "警備システムの解除コードは%%code%%、その後「解除」ボタン。"),
        ("prose", "金庫の番号：%%pin%%"),
        ("prose", "アカウントの復旧コード：\n%%recov%%"),
        (
            "config",
            "[smtp]\nhost = smtp.example.co.jp\nuser = info@example.co.jp\npassword = %%upw%%",
        ),
        ("prose", "Google MapsのAPIキーは`%%aiza%%`です。"),
        ("prose", "パスフレーズ：%%phrase%%"),
        ("chat", "ボットのトークン送って\nどうぞ：%%tg%%"),
        ("prose", "サーバーの秘密鍵：\n%%pem%%"),
        ("prose", "Stripeのシークレットキー：%%sklive%%"),
        ("config", '{\n  "user": "admin",\n  "password": "%%upw%%"\n}'),
        ("prose", "ヘッダー：Authorization: Bearer %%jwt%%"),
        ("prose", "二段階認証のバックアップコード：%%bk%%"),
        ("prose", "裏門の暗証番号は%%code%%です。"),
        ("config", "machine git.example.jp\nlogin ci\npassword %%hexkey%%"),
        ("prose", "Slackボットのトークン：%%xoxb%%"),
        ("prose", "母のマイナポータルのパスワードは%%pw%%（あとで変える）"),
    ],
    [
        ("prose", "パスワードは12文字以上で、数字を含めてください。"),
        ("prose", "パスワードは1Passwordの「経理/ルーター」に保存してあります。"),
        ("prose", "パスワード：********（非表示）"),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<あなたのAPIキー>"),
        ("prose", "成功の鍵は継続です。"),
        ("prose", "ドレスコード：ビジネスカジュアル。"),
        ("chat", "事務所の郵便番号は？\n150-0002"),
        ("prose", "PR 63のコードレビューは明日です。"),
        ("prose", "コミット %%sha%% で修正済み。"),
        ("prose", "SHA-256チェックサム：%%hash%%"),
        ("prose", "注文番号 %%order%%、追跡番号 %%track%%。"),
        ("prose", "請求書番号 %%inv%%、金額 ¥48,400。"),
        ("prose", "パスワード再設定リンク：https://account.example.jp/reset"),
        ("prose", "暗証番号の桁数：4桁。"),
        ("prose", "会議室 805、電話 03-1234-5678、1月10日 14時。"),
        ("prose", "バージョン 4.1.0 をリリースしました。"),
        ("prose", "リクエストID：%%uuid%%"),
        ("config", "公開鍵：\n%%pub%%"),
        ("prose", "またパスワードを忘れたのでリセットしました。"),
        ("prose", "感謝のしるしとして、チーム全員に商品券を配りました。"),
        ("prose", "このモデルのコンテキストは20万トークンです。"),
        ("config", 'password: "{{ db_password }}"\ntoken: "your-token-here"'),
        ("prose", "ソースコードはGitLabにあります。"),
        ("prose", "価格：3,980円（税込）、お届けは12月20日。"),
        ("prose", "画像：%%img%%"),
        ("prose", "パスワードをLINEで送らないでください。"),
        ("prose", "オートロックの番号が変わったので管理人さんに聞いてください。"),
        (
            "table",
            "| 項目 | 値 |\n|---|---|\n| ユーザー | <ユーザー名> |\n| パスワード | <パスワード> |",
        ),
    ],
)

# --- ko ------------------------------------------------------------------------------------
_CASES += _build(
    "ko",
    [
        ("prose", "관리자 페이지 비밀번호는 %%pw%%입니다. 금요일에 바꿀게요."),
        ("chat", "와이파이 비번 뭐야?\n%%pw%%"),
        ("chat", "현관 도어락 번호 알려줘\n%%code%%"),
        ("prose", "카드 비밀번호는 %%pin%%."),
        (
            "prose",
            "김민수 님,\n\n포털 접속 정보 전달드립니다.\n"
            "아이디: minsu.kim\n비밀번호: %%pw%%\n\n감사합니다.\n이지은 드림",
        ),
        ("table", "| 서비스 | 계정 | 비밀번호 |\n|---|---|---|\n| 공유기 | admin | %%pw%% |"),
        ("prose", "- 서버: sftp.hoegye.co.kr\n- 사용자: hoegye\n- 비번: %%rnd%%"),
        ("prose", "비밀번호:\n%%pw%%"),
        ("prose", '비밀번호는 "%%pw%%"예요. 대소문자 주의.'),
        ("prose", "주간회의 메모 12/3\n- 배포용 GitHub 토큰: %%ghp%%\n- 연말 휴가 일정"),
        ("config", "# .env\nDB_PASSWORD=%%upw%%\nDB_USER=app"),
        ("url", "접속 주소: postgresql://app:%%upw%%@10.0.8.2:5432/shop"),
        ("prose", "경비 해제 코드는 %%code%%, 그다음 해제 버튼."),
        ("prose", "금고 번호: %%pin%%"),
        ("prose", "계정 복구 코드:\n%%recov%%"),
        (
            "config",
            "[smtp]\nhost = smtp.example.co.kr\nuser = help@example.co.kr\npassword = %%upw%%",
        ),
        ("prose", "구글 지도 API 키는 `%%aiza%%`입니다."),
        ("prose", "비밀 문구: %%phrase%%"),
        ("chat", "봇 토큰 좀 보내줘\n여기: %%tg%%"),
        ("prose", "서버 개인 키:\n%%pem%%"),
        ("prose", "Stripe 시크릿 키: %%sklive%%"),
        ("config", '{\n  "user": "admin",\n  "password": "%%upw%%"\n}'),
        ("prose", "헤더: Authorization: Bearer %%jwt%%"),
        ("prose", "2단계 인증 백업 코드: %%bk%%"),
        ("prose", "공동현관 비밀번호는 %%code%%입니다."),
        ("config", "machine git.example.kr\nlogin ci\npassword %%hexkey%%"),
        ("prose", "슬랙 봇 토큰: %%xoxb%%"),
        ("prose", "엄마 홈택스 비밀번호는 %%pw%% (나중에 바꾸기)"),
    ],
    [
        ("prose", "비밀번호는 12자 이상, 숫자를 포함해야 합니다."),
        ("prose", "비밀번호는 1Password의 '회계/공유기' 항목에 있어요."),
        ("prose", "비밀번호: ******** (숨김)"),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<API 키 입력>"),
        ("prose", "성공의 열쇠는 꾸준함입니다."),
        ("prose", "드레스 코드: 비즈니스 캐주얼."),
        ("chat", "사무실 우편번호가 뭐예요?\n06236"),
        ("prose", "PR 71 코드 리뷰는 내일 합니다."),
        ("prose", "커밋 %%sha%%에서 수정됨."),
        ("prose", "SHA-256 체크섬: %%hash%%"),
        ("prose", "주문번호 %%order%%, 송장번호 %%track%%."),
        ("prose", "청구서 번호 %%inv%%, 금액 ₩1,250,000."),
        ("prose", "비밀번호 재설정 링크: https://account.example.kr/reset"),
        ("prose", "PIN 길이: 6자리."),
        ("prose", "회의실 1104, 전화 02-123-4567, 1월 8일 오후 2시."),
        ("prose", "버전 1.9.2 배포 완료."),
        ("prose", "요청 ID: %%uuid%%"),
        ("config", "공개 키:\n%%pub%%"),
        ("prose", "비밀번호를 또 잊어버려서 재설정했어요."),
        ("prose", "감사의 표시로 팀원들에게 상품권을 드렸습니다."),
        ("prose", "이 모델은 컨텍스트가 12만 8천 토큰입니다."),
        ("config", 'password: "{{ db_password }}"\ntoken: "your-token-here"'),
        ("prose", "소스 코드는 GitLab에 있습니다."),
        ("prose", "가격: 39,000원, 12월 20일 배송."),
        ("prose", "이미지: %%img%%"),
        ("prose", "비밀번호를 카톡으로 보내지 마세요."),
        ("prose", "공동현관 비밀번호가 바뀌었으니 관리실에 물어보세요."),
        ("table", "| 항목 | 값 |\n|---|---|\n| 아이디 | <아이디> |\n| 비밀번호 | <비밀번호> |"),
    ],
)
# --- any -----------------------------------------------------------------------------------
_CASES += _build(
    "any",
    [
        ("config", "export GITHUB_TOKEN=%%ghp%%\ngh repo clone acme/infra"),
        ("config", "curl -u admin:%%upw%% https://jenkins.internal/api/json"),
        ("config", "docker run -d -e POSTGRES_PASSWORD=%%upw%% -p 5432:5432 postgres:16"),
        ("url", "git remote add origin https://oauth2:%%glpat%%@gitlab.com/acme/backend.git"),
        ("config", "//registry.npmjs.org/:_authToken=%%npm%%"),
        (
            "config",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: %%upw%%",
        ),
        ("config", '{"provider": "anthropic", "api_key": "%%anth%%"}'),
        ("config", 'client = OpenAI(api_key="%%skproj%%")'),
        ("config", "%%sshkey%%"),
        ("config", "db.internal:5432:billing:billing_rw:%%upw%%"),
        ("config", "[prod]\nregion = eu-central-1\naws_secret_access_key = %%awssec%%"),
        ("config", "SENDGRID_API_KEY=%%sg%%"),
        ("config", "HF_TOKEN=%%hf%% python train.py --push"),
        ("config", "Cookie: session=%%jwt%%; Path=/; HttpOnly"),
        ("config", "redis-cli -h cache.internal -a %%upw%% INFO"),
        ("config", "mysql -h 127.0.0.1 -u root -p%%upw%% shop < dump.sql"),
        (
            "config",
            'resource "aws_db_instance" "main" {\n  username = "admin"\n  password = "%%pw%%"\n}',
        ),
        ("config", "echo %%ghpat%% | docker login ghcr.io -u ci --password-stdin"),
        ("config", "ansible_user: deploy\nansible_become_pass: %%pw%%"),
        ("config", "SLACK_BOT_TOKEN=%%xoxb%%\nSLACK_CHANNEL=#deploys"),
        ("config", "PGPASSWORD=%%upw%% psql -h db -U app -d app"),
        ("config", "define('DB_PASSWORD', '%%pw%%');"),
    ],
    [
        ("config", "export GITHUB_TOKEN=$(gh auth token)"),
        ("config", 'curl -u "$JENKINS_USER:$JENKINS_TOKEN" https://jenkins.internal/api/json'),
        ("config", "docker run -e POSTGRES_PASSWORD_FILE=/run/secrets/db_password postgres:16"),
        ("url", "git remote add origin https://gitlab.com/acme/backend.git"),
        ("config", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"),
        (
            "config",
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n"
            "        key: password",
        ),
        ("config", '{"provider": "anthropic", "api_key": "<YOUR_API_KEY>"}'),
        ("config", 'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])'),
        ("config", "%%pubpem%%"),
        (
            "config",
            "commit %%sha%%\nAuthor: Dev <dev@example.com>\nDate:   Tue Dec 1 10:12:00 2026 +0100",
        ),
        ("config", "%%hash%%  memdir-1.4.0-py3-none-any.whl"),
        ("config", '{"id": "%%uuid%%", "status": "active", "created": "2026-12-01"}'),
        ("config", 'password = getpass.getpass("Password: ")'),
        ("config", "image: ghcr.io/acme/api@sha256:%%hash%%"),
        ("config", '"integrity": "%%sri%%"'),
        ("config", "IdentityFile ~/.ssh/id_ed25519\nUser git"),
        ("config", "password_min_length = 12\npassword_require_digit = true"),
        ("config", 'ansible_become_pass: "{{ vault_become_pass }}"'),
        ("config", "secrets:\n  db_password:\n    file: ./secrets/db_password.txt"),
        ("url", "ssh://git@github.com/acme/infra.git"),
        ("config", "Authorization: Bearer <token>"),
        ("config", 'PASSWORD_RE = r"^(?=.*\\d)(?=.*[A-Z]).{12,}$"'),
    ],
)

# --- encoded (any) -------------------------------------------------------------------------

_ZW = "\u200b"
_CYR = str.maketrans(
    {
        "A": "А",
        "K": "К",
        "E": "Е",
        "O": "О",
        "P": "Р",
        "C": "С",
        "a": "а",
        "o": "о",
        "e": "е",
        "p": "р",
    }
)


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _enc_pos() -> list[Case]:
    g = lambda name, i: _GEN[name](f"n9-enc-{i}")  # noqa: E731
    rows: list[tuple[str, str]] = []
    v = _b64(g("ghp", 0))
    rows.append((f"GITHUB_TOKEN_B64={v}", v))
    v = _b64(g("sklive", 1))
    rows.append((f"apiVersion: v1\nkind: Secret\ndata:\n  STRIPE_KEY: {v}", v))
    w = random.Random("n9-enc-words")
    pw_a = (
        f"{w.choice(_WORDS9)}@{w.choice(_WORDS9)}!{tok('n9e2', DIGITS, 2)}/{tok('n9e2b', LOWER, 1)}"
    )
    pw_b = f"{w.choice(_WORDS9)}#{w.choice(_WORDS9)}!{tok('n9e4', DIGITS, 2)}"
    pw_c = f"{w.choice(_WORDS9)}&{w.choice(_WORDS9)}<{tok('n9e5', DIGITS, 2)}"
    v = urllib.parse.quote(pw_a, safe="")
    rows.append((f"https://ops:{v}@ftp.example.net/outgoing/", v))
    v = urllib.parse.quote(g("awssec", 3), safe="")
    rows.append((f"https://example.com/callback?aws_secret_access_key={v}&region=eu-west-1", v))
    v = pw_b.replace("#", "&#35;").replace("!", "&#33;")
    rows.append((f"<p>Password: <code>{v}</code></p>", v))
    v = _html.escape(pw_c)
    rows.append((f"<td>Mot de passe</td><td>{v}</td>", v))
    t = g("sklive", 6)
    v = f"{t[:8]}**{t[8:20]}**{t[20:]}"
    rows.append((f"Stripe key: {v}", v))
    t = g("xoxb", 7)
    v = f"{t[:17]}`-`{t[18:]}"
    rows.append((f"token = `{v}`", v))
    t = g("ghp", 8)
    v = t[:10] + _ZW + t[10:25] + _ZW + t[25:]
    rows.append((f"GitHub token: {v}", v))
    v = "Lav\u200dande" + g("pin", 9) + "!"
    rows.append((f"password: {v}", v))
    v = g("akia", 10).translate(_CYR)
    rows.append((f"aws_access_key_id = {v}\naws_secret_access_key = see below", v))
    v = g("pw", 11)
    rows.append((f"раssword: {v}", v))  # Cyrillic р and а in the label
    v = g("skproj", 12)
    rows.append((f"ΑΡΙ_ΚΕΥ={v}", v))  # Greek capitals in the label
    v = _b64("admin:" + g("upw", 13))
    rows.append((f"Authorization: Basic {v}", v))
    v = urllib.parse.quote(g("glpat", 14), safe="")
    rows.append((f"https://ci.example.org/hook?payload=%7B%22private_token%22%3A%22{v}%22%7D", v))
    return [
        Case(f"n9-any-e{i:02d}-encoded", "any", "encoded", text, sec)
        for i, (text, sec) in enumerate(rows)
    ]


def _enc_neg() -> list[str]:
    return [
        "Body (base64): " + _H["b64"],
        '<img src="' + _H["img"] + '" alt="logo">',
        "sha256: " + _H["hash"],
        "https://www.example.com/search?q=caf%C3%A9%20au%20lait&page=2",
        "<p>Tom &amp; Jerry &lt;3 &quot;classic&quot; &mdash; 1940</p>",
        "**Do not** share the *password* with anyone, not even **IT**.",
        "Run `git rebase -i HEAD~3` then `git push --force-with-lease`.",
        "Модель ТОР-100 снова на складе, артикул ВМХ-2048, цена 4 500 ₽.",
        "Η ΑΚΡΟΠΟΛΗ είναι ανοιχτή ΚΑΘΕ μέρα από τις 8:00.",
        "Family photo 👨\u200d👩\u200d👧 from the trip, see the album.",
        "settings=" + _b64('{"theme":"dark","lang":"de","beta":false}'),
        "https://example.com/login?next=%2Fsettings%2Fprofile%3Ftab%3Dsecurity",
        "Subject: =?UTF-8?B?" + _b64("Einladung zum Sommerfest") + "?=",
        "Το κλειδί της επιτυχίας είναι η υπομονή.",
        'print("\\u00e9t\\u00e9 \\x48\\x65\\x6c\\x6c\\x6f")  # escapes in a test string',
    ]


_CASES += _enc_pos()
_CASES += [Case(f"n9-any-f{i:02d}-encoded", "any", "encoded", t) for i, t in enumerate(_enc_neg())]

assert len({c.id for c in _CASES}) == len(_CASES)
assert all(c.text.count(c.secret) >= 1 for c in _CASES if c.secret)

NINTH: tuple[Case, ...] = tuple(_CASES)
