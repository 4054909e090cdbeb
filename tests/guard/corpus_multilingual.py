"""A multilingual corpus for the credential guard: how people write secrets, and look-alikes.

Nine batches written separately: `TUNING` was used while building the detectors; `HELD`,
`FRESH`, `LATE`, `BLIND`, `SIXTH` and `SEVENTH` (with its `ENCODED` group) were each written
after the fixes prompted by the one before, measured once as unseen text (figures in the
headers of their sections), and their general misses then fixed.  `EIGHTH` was written
unseen after the seventh's tuning, measured once before any tuning on it (recall 0.906,
FPR 0.000), then tuned on.  `NINTH` (in `corpus_later`) was written unseen and measured
once at 0.763 (before round 1), 0.786 (after round 1) and 0.844 / FPR 0.0028 (after round 2),
then tuned on in round 3.  `TENTH` (in `corpus_tenth`) was written unseen and measured once
at 0.740 (before round 1), 0.822 (after round 2) and 0.861 / FPR 0 (after round 3), then
tuned on in round 4.
Each case names its language (en, de, fr, es, it, pt, nl, ru, pl, tr, zh, ja, ko, or "any"
for language-free text) and its kind (prose, config, url, table, chat, obfuscated,
lookalike, encoded; the eighth batch adds note, list and email).  Values are
generated from seeded pieces so no realistic credential is stored literally in the repository.
"""

from __future__ import annotations

import base64
import random
import re
import string

from .case import Case
from .corpus import ALNUM, B64, DIGITS, HEX, UPPER, URLSAFE, jwt, pem_body, tok, uuid
from .corpus_later import NINTH
from .corpus_tenth import TENTH

__all__ = [
    "ALL",
    "BLIND",
    "EIGHTH",
    "ENCODED",
    "FRESH",
    "HELD",
    "LANGUAGES",
    "LATE",
    "NINTH",
    "SEVENTH",
    "SIXTH",
    "TENTH",
    "TUNING",
    "Case",
]

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "tr", "zh", "ja", "ko", "any")

_WORD_LIST = (
    "Nebel Tanne Sommer Regen Lune Soleil Mare Sol Kot Ayı Lotus Fuji Hana Berg Wolke Zorro "
    "Pampa Nieve Cielo Tulp Molen Kwiat Rzeka Deniz Kedi Panda Sakura Haneul Bada Falke Ozean"
)
_WORDS = tuple(_WORD_LIST.split())
_SYMBOLS = "!#$%&*+-.?@_="


def _pw(seed: str) -> str:
    """A password a person would type, in one of several common styles."""
    rng = random.Random(seed)
    style = rng.randrange(5)
    w1, w2 = rng.choice(_WORDS), rng.choice(_WORDS)
    digits = "".join(rng.choice(string.digits) for _ in range(rng.randrange(2, 5)))
    sym = rng.choice(_SYMBOLS)
    if style == 0:
        return f"{w1}.{w2}{digits}"
    if style == 1:
        return f"{w1.lower()}-{w2.lower()}-{rng.choice(_WORDS).lower()}{digits}"
    if style == 2:
        return f"{w1}{digits}{sym}"
    if style == 3:
        return tok(seed, ALNUM, rng.randrange(10, 14))
    return tok(seed, ALNUM + "!#*=+", rng.randrange(10, 14)) + rng.choice(string.digits)


def _token(seed: str, n: int = 32) -> str:
    return tok(seed, ALNUM, n)


def _pos(batch: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    """Rows of (lang, kind, template with {pw} or {tok}); each gets its own value."""
    cases: list[Case] = []
    for i, (lang, kind, template) in enumerate(rows):
        seed = f"{batch}-{lang}-{i}"
        if "{tok}" in template:
            value = _token(seed, 24 + i % 17)
        elif "{pw}" in template:
            value = _pw(seed)
        else:
            value = template.strip()  # the secret is written into the template itself
        text = template.replace("{pw}", value).replace("{tok}", value)
        cases.append(Case(f"{batch}-p{i:03d}-{lang}-{kind}", lang, kind, text, value))
    return cases


def _neg(batch: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    return [
        Case(f"{batch}-n{i:03d}-{lang}-{kind}", lang, kind, text)
        for i, (lang, kind, text) in enumerate(rows)
    ]


_HASH = tok("ml-hash", HEX, 64)
_COMMIT = tok("ml-commit", HEX, 40)
_UUID = "{}-{}-4{}-a{}-{}".format(
    *(tok(f"ml-uuid{i}", HEX, n) for i, n in enumerate((8, 4, 3, 3, 12)))
)
_PUBKEY = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("ml-pub", B64, 43)
_IMG = "iVBORw0KGgoAAAANSUhEUgAA" + tok("ml-img", B64, 60)

# --- batch 1: tuning -----------------------------------------------------------------------

_TUNING_POS: list[tuple[str, str, str]] = [
    # English
    ("en", "prose", "my password is {pw}"),
    ("en", "prose", "Password: {pw}"),
    ("en", "prose", "The wifi password for the office is {pw} (don't share)."),
    ("en", "prose", "I changed the root password to {pw} yesterday."),
    ("en", "prose", "login: alice / {pw}"),
    ("en", "prose", "The API key is {tok}"),
    ("en", "prose", "access token -> {tok}"),
    ("en", "prose", "Here's the staging secret: {tok}"),
    ("en", "prose", "PIN for the door: 48215"),
    ("en", "prose", "creds are admin / {pw}"),
    ("en", "prose", "Passphrase: {pw}"),
    ("en", "prose", "- db password = {pw}"),
    # German
    ("de", "prose", "Passwort: {pw}"),
    ("de", "prose", "Das Passwort lautet {pw}"),
    ("de", "prose", "Mein Datenbankpasswort ist {pw}"),
    ("de", "prose", "Zugriffstoken (bitte nicht weitergeben): {tok}"),
    ("de", "prose", "Kennwort für den Router: {pw}"),
    ("de", "prose", "Ich habe das WLAN-Passwort auf {pw} geändert."),
    ("de", "prose", "Zugangsdaten: admin / {pw}"),
    ("de", "prose", "API-Schlüssel: {tok}"),
    ("de", "prose", "Das neue Passwort ist jetzt {pw}"),
    ("de", "prose", "Geheimzahl der Karte: 7391"),
    # French
    ("fr", "prose", "le mot de passe : {pw}"),
    ("fr", "prose", "Mon mot de passe est {pw}"),
    ("fr", "prose", "mdp du serveur = {pw}"),
    ("fr", "prose", "Le jeton d'accès est {tok}"),
    ("fr", "prose", "clé API : {tok}"),
    ("fr", "prose", "identifiants : jdupont / {pw}"),
    ("fr", "prose", "J'ai changé le mot de passe en {pw}"),
    ("fr", "prose", "Mot de passe Wi-Fi : {pw}"),
    # Spanish
    ("es", "prose", "la contraseña es {pw}"),
    ("es", "prose", "Contraseña: {pw}"),
    ("es", "prose", "La clave del wifi es {pw}"),
    ("es", "prose", "Mi contraseña nueva: {pw}"),
    ("es", "prose", "token de acceso: {tok}"),
    ("es", "prose", "credenciales: admin / {pw}"),
    ("es", "prose", "Cambié la contraseña a {pw}"),
    ("es", "prose", "clave API = {tok}"),
    # Italian
    ("it", "prose", "la password è {pw}"),
    ("it", "prose", "Password: {pw}"),
    ("it", "prose", "La chiave API è {tok}"),
    ("it", "prose", "credenziali: mrossi / {pw}"),
    ("it", "prose", "Ho cambiato la password in {pw}"),
    ("it", "prose", "token di accesso: {tok}"),
    ("it", "prose", "La parola d'ordine è {pw}"),
    ("it", "prose", "password del database = {pw}"),
    # Portuguese
    ("pt", "prose", "a senha é {pw}"),
    ("pt", "prose", "Senha: {pw}"),
    ("pt", "prose", "Minha senha do email é {pw}"),
    ("pt", "prose", "A palavra-passe é {pw}"),
    ("pt", "prose", "chave de API: {tok}"),
    ("pt", "prose", "Mudei a senha para {pw}"),
    ("pt", "prose", "token de acesso = {tok}"),
    ("pt", "prose", "credenciais: joao / {pw}"),
    # Dutch
    ("nl", "prose", "het wachtwoord is {pw}"),
    ("nl", "prose", "Wachtwoord: {pw}"),
    ("nl", "prose", "Mijn databasewachtwoord is {pw}"),
    ("nl", "prose", "API-sleutel: {tok}"),
    ("nl", "prose", "Ik heb het wachtwoord gewijzigd naar {pw}"),
    ("nl", "prose", "inloggegevens: pieter / {pw}"),
    ("nl", "prose", "toegangstoken = {tok}"),
    ("nl", "prose", "De pincode is 8264"),
    # Russian
    ("ru", "prose", "пароль: {pw}"),
    ("ru", "prose", "Мой пароль от почты {pw}"),
    ("ru", "prose", "Пароль от сервера — {pw}"),
    ("ru", "prose", "токен доступа: {tok}"),
    ("ru", "prose", "API ключ: {tok}"),
    ("ru", "prose", "Я поменял пароль на {pw}"),
    ("ru", "prose", "логин/пароль: ivan / {pw}"),
    ("ru", "prose", "секретный ключ = {tok}"),
    # Polish
    ("pl", "prose", "hasło: {pw}"),
    ("pl", "prose", "Moje hasło to {pw}"),
    ("pl", "prose", "Hasło do wifi: {pw}"),
    ("pl", "prose", "klucz API: {tok}"),
    ("pl", "prose", "Zmieniłem hasło na {pw}"),
    ("pl", "prose", "token dostępu = {tok}"),
    ("pl", "prose", "dane logowania: jan / {pw}"),
    ("pl", "prose", "Nowe hasło jest {pw}"),
    # Turkish
    ("tr", "prose", "şifre: {pw}"),
    ("tr", "prose", "Wi-Fi şifresi: {pw}"),
    ("tr", "prose", "Şifrem {pw}"),
    ("tr", "prose", "Veritabanı parolası {pw}"),
    ("tr", "prose", "API anahtarı: {tok}"),
    ("tr", "prose", "erişim token: {tok}"),
    ("tr", "prose", "Yeni şifre {pw} olarak ayarlandı"),
    ("tr", "prose", "giriş bilgileri: ahmet / {pw}"),
    # Chinese
    ("zh", "prose", "我的邮箱密码改成了 {pw}"),
    ("zh", "prose", "密码：{pw}"),
    ("zh", "prose", "服务器密码是{pw}"),
    ("zh", "prose", "数据库的密码为 {pw}"),
    ("zh", "prose", "访问令牌：{tok}"),
    ("zh", "prose", "API密钥是 {tok}"),
    ("zh", "prose", "wifi密码 {pw}"),
    ("zh", "prose", "账号 admin 密码 {pw}"),
    # Japanese
    ("ja", "prose", "パスワードは {pw} です"),
    ("ja", "prose", "パスワード：{pw}"),
    ("ja", "prose", "サーバーのパスワードは「{pw}」です。"),
    ("ja", "prose", "アクセストークン: {tok}"),
    ("ja", "prose", "APIキーは{tok}です"),
    ("ja", "prose", "パスワードを {pw} に変更しました"),
    ("ja", "prose", "暗証番号は 5820 です"),
    ("ja", "prose", "Wi-Fiのパスワード {pw}"),
    # Korean
    ("ko", "prose", "비밀번호는 {pw}입니다"),
    ("ko", "prose", "비밀번호: {pw}"),
    ("ko", "prose", "서버 비밀번호는 {pw} 입니다."),
    ("ko", "prose", "API 키: {tok}"),
    ("ko", "prose", "액세스 토큰은 {tok}"),
    ("ko", "prose", "비번 {pw}"),
    ("ko", "prose", "와이파이 비밀번호를 {pw}로 바꿨어요"),
    ("ko", "prose", "암호: {pw}"),
    # config files, next line and nested
    ("any", "config", "password:\n    {pw}\n"),
    ("any", "config", "db:\n  password: |\n    {pw}\n"),
    ("any", "config", "[database]\npassword =\n    {pw}\n"),
    ("any", "config", 'password = """\n{pw}"""\n'),
    ("any", "config", 'DB_PASSWORD="\n{pw}\n"\n'),
    ("any", "config", "secrets:\n  github: {tok}\n  npm: {tok}\n"),
    ("any", "config", "[credentials]\nadmin = {pw}\n"),
    ("any", "config", "spring:\n  datasource:\n    password:\n      {pw}\n"),
    ("de", "config", "passwort:\n  {pw}\n"),
    ("fr", "config", "mot_de_passe: {pw}\n"),
    ("es", "config", "contraseña = {pw}\n"),
    ("any", "config", '{"auth": {"password": "{pw}"}}'),
    ("any", "config", "token:\n  - {tok}\n"),
    ("nl", "config", "wachtwoord: {pw}\n"),
    # URLs of many schemes
    ("any", "url", "git clone https://deploy:{pw}@git.example.org/repo.git"),
    ("any", "url", "ftp://backup:{pw}@files.internal.lan/dumps"),
    ("any", "url", "smb://svc:{pw}@fileserver/share"),
    ("any", "url", "sftp://ops:{pw}@10.0.0.5:22/"),
    ("any", "url", "rtsp://cam:{pw}@192.168.1.20/stream1"),
    ("any", "url", "Open http://admin:{pw}@router.local/ to configure."),
    ("any", "url", "amqps://worker:{pw}@mq.example.com:5671/vhost"),
    ("any", "url", "ssh://git:{pw}@example.net/project"),
    # obfuscation
    ("any", "obfuscated", "AKIA\u200bQ3EGZ7KXWPAT4BLJ"),
    ("any", "obfuscated", "ghp_\u200d" + tok("ml-ghp", ALNUM, 36)),
    ("any", "obfuscated", "Passwort\u200b: {pw}"),
    ("any", "obfuscated", "ｐａｓｓｗｏｒｄ：{pw}"),
    ("any", "obfuscated", "password=\u2066{pw}\u2069"),
    ("any", "obfuscated", "ＡＫＩＡＱ３ＥＧＺ７ＫＸＷＰＡＴ４ＢＬＪ"),
    ("en", "prose", "The secret half of the key is {tok}"),
    # notes checked while tuning (after the first held-aside measurement)
    ("de", "prose", "WLAN: FritzBox-7590 / Passwort 4711-0815-2342"),
    ("de", "prose", "Kennwort lautet: {pw}"),
    ("it", "prose", "La password del wifi di casa è {pw}"),
    ("tr", "prose", "şifremi {pw} yaptım"),
    ("ja", "prose", "パスワード「{pw}」でログインできます"),
    ("en", "prose", "The password for the admin panel is now set to {pw}."),
    ("zh", "prose", "银行卡密码是 580274"),
    ("en", "prose", "router password: 48213907"),
]

_TUNING_NEG: list[tuple[str, str, str]] = [
    ("en", "prose", "The password must be at least 12 characters long."),
    ("en", "prose", "Reset your password at https://accounts.example.com/reset"),
    ("en", "prose", "Password: see the 1Password entry 'Staging DB'."),
    ("en", "prose", "Use a password manager; never reuse passwords."),
    ("en", "prose", "The token count for this prompt is 4096."),
    ("en", "prose", "API key: stored in Vault under kv/app."),
    ("en", "prose", "Tokens expire after 3600 seconds."),
    ("en", "lookalike", f"sha256 checksum of the release: {_HASH}"),
    ("en", "lookalike", f"Fixed the token refresh bug in commit {_COMMIT}."),
    ("en", "lookalike", f"public key: ssh-ed25519 {_PUBKEY} alice@laptop"),
    ("en", "lookalike", "export API_KEY=$API_KEY"),
    ("en", "lookalike", "password: <your-password>"),
    ("en", "lookalike", "token: ${GITHUB_TOKEN}"),
    ("en", "lookalike", "secret: {{ secret }}"),
    ("en", "lookalike", "password: ********"),
    ("en", "lookalike", "api key: xxxx"),
    ("en", "lookalike", "Password: changeme"),
    ("en", "lookalike", "token: REDACTED"),
    ("en", "lookalike", f"request id {_UUID}"),
    ("en", "prose", "The PIN is 4 digits."),
    ("de", "prose", "Passwort vergessen?"),
    ("de", "prose", "Das Passwort muss mindestens 12 Zeichen lang sein."),
    ("de", "prose", "Passwort: steht im Tresor"),
    ("de", "prose", "Bitte das Kennwort regelmäßig ändern."),
    ("de", "prose", "Der Passwortmanager synchronisiert über WebDAV."),
    ("de", "prose", "Zugangsdaten liegen im Team-Tresor."),
    ("de", "lookalike", f"Prüfsumme der Datei: {_HASH}"),
    ("de", "prose", "Token-Limit ist 8000 pro Anfrage."),
    ("fr", "prose", "Mot de passe oublié ?"),
    ("fr", "prose", "Le mot de passe doit contenir au moins 12 caractères."),
    ("fr", "prose", "mot de passe : voir le coffre-fort"),
    ("fr", "prose", "Changez votre mot de passe tous les 90 jours."),
    ("fr", "lookalike", "clé publique : ssh-ed25519 " + _PUBKEY),
    ("es", "prose", "¿Olvidaste tu contraseña?"),
    ("es", "prose", "La contraseña debe tener al menos 8 caracteres."),
    ("es", "prose", "contraseña: la misma de siempre"),
    ("es", "prose", "La clave del éxito es la constancia."),
    ("it", "prose", "Password dimenticata?"),
    ("it", "prose", "La password deve avere almeno 10 caratteri."),
    ("it", "prose", "La chiave è sotto lo zerbino."),
    ("pt", "prose", "Esqueceu a senha?"),
    ("pt", "prose", "A senha deve ter pelo menos 8 caracteres."),
    ("pt", "prose", "senha: pergunte ao João"),
    ("nl", "prose", "Wachtwoord vergeten?"),
    ("nl", "prose", "Het wachtwoord moet minstens 12 tekens bevatten."),
    ("nl", "prose", "De sleutel ligt onder de mat."),
    ("ru", "prose", "Забыли пароль?"),
    ("ru", "prose", "Пароль должен содержать не менее 8 символов."),
    ("ru", "prose", "Ключ от квартиры у соседа."),
    ("pl", "prose", "Nie pamiętasz hasła?"),
    ("pl", "prose", "Hasło musi mieć co najmniej 8 znaków."),
    ("tr", "prose", "Şifrenizi mi unuttunuz?"),
    ("tr", "prose", "Şifre en az 8 karakter olmalıdır."),
    ("zh", "prose", "密码长度至少8位"),
    ("zh", "prose", "忘记密码？请联系管理员。"),
    ("zh", "prose", "密码学是一门有趣的学科。"),
    ("zh", "lookalike", f"文件的SHA256哈希值是 {_HASH}"),
    ("ja", "prose", "パスワードを忘れた場合はこちら"),
    ("ja", "prose", "パスワードは8文字以上にしてください。"),
    ("ja", "prose", "パスワードマネージャーを使いましょう。"),
    ("ko", "prose", "비밀번호를 잊으셨나요?"),
    ("ko", "prose", "비밀번호는 8자 이상이어야 합니다."),
    ("ko", "prose", "암호화폐 시장이 하락했다."),
    ("any", "config", "password:\n  file: /run/secrets/db_password\n"),
    ("any", "config", "secrets:\n  path: /etc/app/secrets\n  enabled: true\n"),
    ("any", "config", "[credentials]\nprovider = vault\nregion = eu-west-1\n"),
    ("any", "config", "token:\n  ttl: 3600\n  refresh: true\n"),
    ("any", "config", "password:\n  min_length: 12\n  require_digit: true\n"),
    ("any", "lookalike", f'<img src="data:image/png;base64,{_IMG}">'),
    ("any", "url", "https://user@github.com/org/repo.git"),
    ("any", "url", "https://user:${TOKEN}@git.example.org/repo.git"),
    ("any", "url", "https://user:password@example.com/"),
    ("any", "url", "postgres://postgres:postgres@localhost:5432/db"),
    # form labels and notes checked while tuning (after the first held-aside measurement)
    ("de", "prose", "Geben Sie Ihr Passwort ein:"),
    ("de", "prose", "PIN: 4-stellig"),
    ("de", "prose", "Schlüssel: 2x Haustür, 1x Keller"),
    ("fr", "prose", "Entrez votre mot de passe :"),
    ("es", "prose", "Introduzca su contraseña:"),
    ("it", "prose", "Inserisci la password:"),
    ("pt", "prose", "Digite sua senha:"),
    ("nl", "prose", "wachtwoord: zie 1Password"),
    ("ru", "prose", "Введите пароль:"),
    ("pl", "prose", "hasło: jak zwykle"),
    ("tr", "prose", "Şifrenizi girin:"),
    ("zh", "prose", "密码：与用户名相同"),
    ("ja", "prose", "パスワードを入力してください："),
    ("ko", "prose", "비밀번호: 관리자에게 문의"),
    (
        "en",
        "prose",
        "A model trained on token embeddings that maps each token to a 16,384-dim space.",
    ),
    ("en", "prose", "call the password hotline +49 30 1234567 89"),
    ("en", "lookalike", "Access key: AKIAIOSFODNN7EXAMPLE"),
    ("en", "lookalike", "password_hash = bcrypt.hashpw(pw, salt)"),
    ("en", "prose", "Password changed on 20240312"),
    ("en", "prose", "Account ID: 123456789012, password: see vault"),
    ("de", "prose", "Das Passwort hat 12 Zeichen"),
    ("zh", "prose", "密码为6位数字"),
    ("zh", "prose", "密码错误次数：3"),
    ("ja", "prose", "パスワードの桁数は12桁です"),
    ("any", "prose", "Tokens: 1,234,567"),
]

# --- batch 2: held aside (first measured at recall 88.6%, FPR 0%) ------------------------

_HELD_POS: list[tuple[str, str, str]] = [
    ("en", "prose", "btw the vpn pw is now {pw}"),
    ("en", "prose", "Jenkins admin password: {pw}"),
    ("en", "prose", "The new password for the shared mailbox will be {pw} from Monday."),
    ("en", "prose", "Slack me if {pw} stops working as the NAS password."),
    ("en", "prose", "Our deploy token: {tok}"),
    ("en", "prose", "client secret is {tok}"),
    ("en", "prose", "Credentials: ops / {pw}"),
    ("en", "prose", "Secret key = {tok}"),
    ("de", "prose", "Neues Kennwort: {pw}"),
    ("de", "prose", "Das Root-Passwort vom NAS ist {pw}"),
    ("de", "prose", "Hier das Passwort für den Gastzugang: {pw}"),
    ("de", "prose", "Anmeldedaten für Jira: mmeier / {pw}"),
    ("de", "prose", "Der Zugangscode lautet {pw}"),
    ("de", "prose", "Zugriffsschlüssel = {tok}"),
    ("de", "prose", "Passwort ist {pw}, bitte sofort ändern"),
    ("fr", "prose", "Voici le mot de passe du wifi : {pw}"),
    ("fr", "prose", "Le nouveau mot de passe sera {pw}"),
    ("fr", "prose", "jeton GitLab : {tok}"),
    ("fr", "prose", "clé secrète = {tok}"),
    ("fr", "prose", "Code d'accès : {pw}"),
    ("es", "prose", "Te paso la contraseña: {pw}"),
    ("es", "prose", "La contraseña del router es {pw}"),
    ("es", "prose", "clave de acceso: {pw}"),
    ("es", "prose", "El token es {tok}"),
    ("es", "prose", "Contraseña nueva = {pw}"),
    ("it", "prose", "Ecco la password del wifi: {pw}"),
    ("it", "prose", "La nuova password sarà {pw}"),
    ("it", "prose", "chiave segreta: {tok}"),
    ("it", "prose", "codice di accesso = {pw}"),
    ("it", "prose", "Il token è {tok}"),
    ("pt", "prose", "Segue a senha do servidor: {pw}"),
    ("pt", "prose", "A nova senha será {pw}"),
    ("pt", "prose", "O token é {tok}"),
    ("pt", "prose", "senha do banco = {pw}"),
    ("pt", "prose", "chave secreta: {tok}"),
    ("nl", "prose", "Hier is het wachtwoord van de wifi: {pw}"),
    ("nl", "prose", "Het nieuwe wachtwoord wordt {pw}"),
    ("nl", "prose", "Wachtwoord van de NAS = {pw}"),
    ("nl", "prose", "geheime sleutel: {tok}"),
    ("nl", "prose", "Het token is {tok}"),
    ("ru", "prose", "Новый пароль: {pw}"),
    ("ru", "prose", "Пароль от wifi {pw}"),
    ("ru", "prose", "Вот пароль для входа: {pw}"),
    ("ru", "prose", "Токен: {tok}"),
    ("ru", "prose", "пароль администратора = {pw}"),
    ("pl", "prose", "Nowe hasło: {pw}"),
    ("pl", "prose", "Hasło do serwera to {pw}"),
    ("pl", "prose", "Oto hasło: {pw}"),
    ("pl", "prose", "Token: {tok}"),
    ("pl", "prose", "hasło administratora = {pw}"),
    ("tr", "prose", "Yeni şifre: {pw}"),
    ("tr", "prose", "Sunucu şifresi {pw}"),
    ("tr", "prose", "Parola: {pw}"),
    ("tr", "prose", "Token: {tok}"),
    ("tr", "prose", "yönetici parolası = {pw}"),
    ("zh", "prose", "新密码是 {pw}"),
    ("zh", "prose", "路由器密码：{pw}"),
    ("zh", "prose", "我把密码设置为{pw}了"),
    ("zh", "prose", "令牌：{tok}"),
    ("zh", "prose", "密钥为 {tok}"),
    ("zh", "prose", "管理员口令 = {pw}"),
    ("ja", "prose", "新しいパスワードは{pw}です。"),
    ("ja", "prose", "ルーターのパスワード：{pw}"),
    ("ja", "prose", "トークンは {tok} です"),
    ("ja", "prose", "シークレット: {tok}"),
    ("ja", "prose", "管理者パスワード = {pw}"),
    ("ko", "prose", "새 비밀번호는 {pw} 입니다"),
    ("ko", "prose", "공유기 비밀번호: {pw}"),
    ("ko", "prose", "토큰: {tok}"),
    ("ko", "prose", "관리자 패스워드 = {pw}"),
    ("ko", "prose", "비밀번호가 {pw}로 변경되었습니다"),
    ("any", "config", "mysql:\n  root_password:\n    {pw}\n"),
    ("any", "config", "[smtp]\npassword =\n  {pw}\n"),
    ("any", "config", "auth:\n  password: >\n    {pw}\n"),
    ("any", "config", "api_token = '''\n{tok}'''\n"),
    ("any", "config", "[secrets]\nstripe = {tok}\n"),
    ("any", "config", "passwords:\n  - {pw}\n"),
    ("de", "config", "datenbank:\n  passwort: {pw}\n"),
    ("ru", "config", "пароль = {pw}\n"),
    ("any", "url", "webdav://sync:{pw}@dav.example.org/files"),
    ("any", "url", "ldap://cn=admin:{pw}@ldap.corp.lan/"),
    ("any", "url", "https://bot:{pw}@ci.example.com/job"),
    ("any", "url", "mqtt://sensor:{pw}@broker.lan:1883"),
    ("any", "url", "svn+ssh://dev:{pw}@svn.corp.lan/trunk"),
    ("any", "obfuscated", "sk_live_\u200b" + tok("ml-stripe", ALNUM, 24)),
    ("any", "obfuscated", "ｔｏｋｅｎ＝" + "{tok}"),
    ("any", "obfuscated", "Kenn\u00adwort: {pw}"),
    ("any", "obfuscated", "密码\u200b：{pw}"),
]

_HELD_NEG: list[tuple[str, str, str]] = [
    ("en", "prose", "Passwords are hashed with argon2id before storage."),
    ("en", "prose", "If you forget the password, click 'Forgot password'."),
    ("en", "prose", "The access token lifetime is 15 minutes."),
    ("en", "prose", "Rotate the API key every 90 days."),
    ("en", "lookalike", f"The git commit {_COMMIT} changed the password policy."),
    ("en", "lookalike", "token: <token>"),
    ("en", "lookalike", "password: ..."),
    ("en", "prose", "Secret Santa gifts are due Friday."),
    ("de", "prose", "Das Passwort wurde zurückgesetzt."),
    ("de", "prose", "Kennwort ändern unter Einstellungen > Sicherheit."),
    ("de", "prose", "Der Schlüssel liegt beim Hausmeister."),
    ("de", "lookalike", "Passwort: ${DB_PASSWORD}"),
    ("fr", "prose", "Le mot de passe a été réinitialisé."),
    ("fr", "prose", "La clé est chez la gardienne."),
    ("fr", "lookalike", "mot de passe : ****"),
    ("es", "prose", "La contraseña se cambia cada 90 días."),
    ("es", "lookalike", "contraseña: <tu-contraseña>"),
    ("it", "prose", "La password è scaduta, cambiala."),
    ("it", "lookalike", "password: changeme"),
    ("pt", "prose", "A senha expirou ontem."),
    ("pt", "lookalike", "senha: xxxx"),
    ("nl", "prose", "Het wachtwoord is verlopen."),
    ("nl", "lookalike", "wachtwoord: REDACTED"),
    ("ru", "prose", "Пароль был сброшен администратором."),
    ("ru", "lookalike", "пароль: ********"),
    ("pl", "prose", "Hasło wygasło wczoraj."),
    ("pl", "lookalike", "hasło: <twoje-hasło>"),
    ("tr", "prose", "Şifre sıfırlandı."),
    ("tr", "lookalike", "şifre: ****"),
    ("zh", "prose", "请定期修改密码。"),
    ("zh", "prose", "密码已重置，请查收邮件。"),
    ("zh", "lookalike", "密码：******"),
    ("ja", "prose", "パスワードはリセットされました。"),
    ("ja", "lookalike", "パスワード：********"),
    ("ko", "prose", "비밀번호가 재설정되었습니다."),
    ("ko", "lookalike", "비밀번호: ****"),
    ("any", "config", "password:\n  from_env: DB_PASSWORD\n"),
    ("any", "config", "credentials:\n  file: ~/.aws/credentials\n"),
    (
        "any",
        "lookalike",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBG"
        + tok("ml-pgp", B64, 60)
        + "\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    ("any", "url", "https://www.example.com/login?next=/home"),
]


# --- batch 3: fresh (written after batch 2's fixes; first measured at 95.9%, FPR 4.3%) ---

_FRESH_POS: list[tuple[str, str, str]] = [
    ("en", "prose", "Note to self: the router admin password is {pw} — change it after the move."),
    ("en", "prose", "## Staging\n- host: stg-01\n- password: {pw}\n"),
    ("en", "prose", "Support told me my temporary password: {pw}"),
    ("en", "prose", "| service | password |\n|---|---|\n| grafana | {pw} |"),
    ("en", "prose", "Bearer-less API key for the weather service: {tok}"),
    ("en", "prose", "the signing secret = {tok}"),
    ("de", "prose", "Kurze Notiz: Passwort vom Drucker-Admin ist {pw}"),
    ("de", "prose", "- Benutzer: admin\n- Kennwort: {pw}"),
    ("de", "prose", "Für den Testzugang gilt das Passwort {pw}"),
    ("de", "prose", "Der API-Token für Grafana lautet {tok}"),
    ("fr", "prose", "Rappel : le mot de passe de la box est {pw}"),
    ("fr", "prose", "- utilisateur : admin\n- mot de passe : {pw}"),
    ("fr", "prose", "Le secret du webhook : {tok}"),
    ("es", "prose", "Ojo: la contraseña del servidor de pruebas es {pw}"),
    ("es", "prose", "- usuario: admin\n- contraseña: {pw}"),
    ("es", "prose", "La clave secreta de la API es {tok}"),
    ("it", "prose", "Promemoria: la password del NAS è {pw}"),
    ("it", "prose", "- utente: admin\n- password: {pw}"),
    ("it", "prose", "Il segreto del client è {tok}"),
    ("pt", "prose", "Lembrete: a senha do roteador é {pw}"),
    ("pt", "prose", "- usuário: admin\n- senha: {pw}"),
    ("pt", "prose", "O segredo do cliente é {tok}"),
    ("nl", "prose", "Let op: het wachtwoord van de router is {pw}"),
    ("nl", "prose", "- gebruiker: admin\n- wachtwoord: {pw}"),
    ("nl", "prose", "De API-sleutel is {tok}"),
    ("ru", "prose", "Напоминание: пароль от роутера {pw}"),
    ("ru", "prose", "- пользователь: admin\n- пароль: {pw}"),
    ("ru", "prose", "Ключ API — {tok}"),
    ("pl", "prose", "Przypomnienie: hasło do routera to {pw}"),
    ("pl", "prose", "- użytkownik: admin\n- hasło: {pw}"),
    ("pl", "prose", "Klucz API to {tok}"),
    ("tr", "prose", "Not: modem şifresi {pw}"),
    ("tr", "prose", "- kullanıcı: admin\n- şifre: {pw}"),
    ("tr", "prose", "API anahtarı {tok}"),
    ("zh", "prose", "备忘：路由器管理密码是{pw}，别忘了改。"),
    ("zh", "prose", "- 用户名：admin\n- 密码：{pw}"),
    ("zh", "prose", "这是测试环境的API密钥：{tok}"),
    ("ja", "prose", "メモ：ルーターの管理パスワードは{pw}です。"),
    ("ja", "prose", "- ユーザー名: admin\n- パスワード: {pw}"),
    ("ja", "prose", "テスト環境のアクセストークンは{tok}です。"),
    ("ko", "prose", "메모: 공유기 관리자 비밀번호는 {pw}입니다."),
    ("ko", "prose", "- 사용자: admin\n- 비밀번호: {pw}"),
    ("ko", "prose", "테스트 서버 API 키는 {tok}입니다."),
    (
        "any",
        "config",
        "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD:\n        {pw}\n",
    ),
    ("any", "config", "[mail]\nsmtp_password =\n\t{pw}\n"),
    ("any", "url", "redis://:{pw}@cache.internal:6379/0"),
    ("any", "url", "imaps://me:{pw}@mail.corp.lan/INBOX"),
    ("any", "obfuscated", "pass\u200bword: {pw}"),
    ("any", "obfuscated", "ｇｈｐ＿" + tok("ml-ghp-fw", ALNUM, 36)),
]

_FRESH_NEG: list[tuple[str, str, str]] = [
    ("en", "prose", "## Passwords\nWe use Bitwarden for all shared passwords; ask Sam for access."),
    ("en", "prose", "The login page returns 401 when the token is expired."),
    ("en", "prose", "Password requirements: 12+ chars, one digit, one symbol."),
    ("en", "prose", "Keys are rotated by the KMS every 365 days."),
    ("en", "prose", "Tokenizer: tiktoken cl100k_base, 8192 tokens max."),
    ("en", "lookalike", "The secret is out: we ship on Monday."),
    ("en", "lookalike", f"SHA-256 of the key file: {_HASH}"),
    ("en", "lookalike", "PASSWORD=${PASSWORD:-changeme}"),
    ("en", "lookalike", "password: !secret db_password"),
    ("en", "lookalike", f"trace id {_UUID} for the failed login"),
    ("de", "prose", "Passwörter werden mit bcrypt gehasht."),
    ("de", "prose", "Das WLAN-Passwort steht auf der Rückseite des Routers."),
    ("de", "prose", "Schlüsselübergabe am Freitag um 10 Uhr."),
    ("de", "lookalike", "Passwort: siehe KeePass"),
    ("fr", "prose", "Les mots de passe sont stockés dans Bitwarden."),
    ("fr", "prose", "Le jeton expire au bout de 15 minutes."),
    ("fr", "lookalike", "mot de passe : (demander à Julie)"),
    ("es", "prose", "Las contraseñas se guardan cifradas."),
    ("es", "prose", "La clave está en el cajón de arriba."),
    ("es", "lookalike", "contraseña: ver 1Password"),
    ("it", "prose", "Le password sono salvate in Bitwarden."),
    ("it", "prose", "Il token scade dopo un'ora."),
    ("pt", "prose", "As senhas ficam no cofre da equipe."),
    ("pt", "prose", "A chave está com o porteiro."),
    ("nl", "prose", "Wachtwoorden staan in de kluis van het team."),
    ("nl", "prose", "Het token verloopt na een uur."),
    ("ru", "prose", "Пароли хранятся в менеджере паролей."),
    ("ru", "prose", "Токен истекает через час."),
    ("pl", "prose", "Hasła trzymamy w menedżerze haseł."),
    ("pl", "prose", "Token wygasa po godzinie."),
    ("tr", "prose", "Şifreler parola yöneticisinde saklanıyor."),
    ("tr", "prose", "Token bir saat sonra geçersiz olur."),
    ("zh", "prose", "密码保存在团队的密码管理器里。"),
    ("zh", "prose", "令牌一小时后过期。"),
    ("zh", "lookalike", "密码：见1Password"),
    ("ja", "prose", "パスワードはチームのパスワードマネージャーに保存しています。"),
    ("ja", "prose", "トークンは1時間で失効します。"),
    ("ko", "prose", "비밀번호는 팀 비밀번호 관리자에 저장되어 있습니다."),
    ("ko", "prose", "토큰은 1시간 후 만료됩니다."),
    ("any", "config", "auth:\n  type: oauth2\n  scopes: read write\n"),
    ("any", "config", "password:\n  ${DB_PASSWORD}\n"),
    ("any", "config", "[secrets]\nbackend = vault\npath = secret/data/app\n"),
    ("any", "config", 'token = """\n${CI_TOKEN}"""\n'),
    ("any", "url", "https://github.com/org/repo/commit/" + _COMMIT),
    ("any", "url", "ssh://git@github.com:22/org/repo.git"),
    (
        "any",
        "lookalike",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"
        + tok("ml-pk", B64, 40)
        + "\n-----END PUBLIC KEY-----",
    ),
]

# --- batch 4: late (written after batch 3's fixes; first measured at 94.4%, FPR 3.3%) ----

_LATE_POS: list[tuple[str, str, str]] = [
    ("en", "prose", "fyi wifi pass for the cabin: {pw}"),
    ("en", "prose", "Temp password (expires Friday): {pw}"),
    ("en", "prose", "OpenSearch admin creds -> admin:{pw}"),
    ("en", "prose", "shared drive password = {pw} (ask before sharing)"),
    ("de", "prose", "Das WLAN heißt Gast, Passwort: {pw}"),
    ("de", "prose", "Neues Datenbank-Kennwort lautet {pw}."),
    ("de", "prose", "Token fürs Deployment: {tok}"),
    ("fr", "prose", "Le mdp du NAS c'est {pw}"),
    ("fr", "prose", "Voici la clé d'API : {tok}"),
    ("es", "prose", "pass del wifi: {pw}"),
    ("es", "prose", "Mi clave de Gmail es {pw}"),
    ("it", "prose", "La pw del router è {pw}"),
    ("it", "prose", "Chiave API di produzione: {tok}"),
    ("pt", "prose", "A senha nova do Wi-Fi ficou {pw}"),
    ("pt", "prose", "Token da API: {tok}"),
    ("nl", "prose", "Het wifi-wachtwoord is {pw}"),
    ("nl", "prose", "Wachtwoord voor de database: {pw}"),
    ("ru", "prose", "Пароль администратора: {pw}"),
    ("ru", "prose", "новый пароль {pw}"),
    ("pl", "prose", "Hasło do bazy danych: {pw}"),
    ("pl", "prose", "Nowe hasło do wifi to {pw}"),
    ("tr", "prose", "Wifi şifremiz {pw}"),
    ("tr", "prose", "Veritabanı şifresi: {pw}"),
    ("zh", "prose", "wifi的密码是{pw}"),
    ("zh", "prose", "数据库连接密码：{pw}（不要外传）"),
    ("zh", "prose", "新的访问令牌是 {tok}"),
    ("ja", "prose", "DBのパスワードは{pw}になりました"),
    ("ja", "prose", "新しいトークン：{tok}"),
    ("ko", "prose", "DB 비밀번호: {pw}"),
    ("ko", "prose", "와이파이 비번은 {pw}이에요"),
    ("any", "config", "redis:\n  auth:\n    password:\n      {pw}\n"),
    ("any", "config", "[client]\npassword=\n    {pw}\n"),
    ("any", "url", "nats://svc:{pw}@nats.internal:4222"),
    ("any", "url", "Clone with https://ci-bot:{pw}@gitea.home.lan/infra.git"),
    ("any", "obfuscated", "Pass\u200cwort: {pw}"),
    ("any", "obfuscated", "ｐａｓｓｗｏｒｄ ｉｓ {pw}"),
]

_LATE_NEG: list[tuple[str, str, str]] = [
    ("en", "prose", "Password reset emails are sent from no-reply@corp.example."),
    ("en", "prose", "We moved tokens to the GPT-4o tokenizer (o200k_base)."),
    ("en", "prose", "The password policy ticket is SEC-4821."),
    ("en", "prose", "API key quota: 10k requests/day on the Pro plan."),
    ("en", "prose", "Secret management: we use SOPS with age keys (see ADR-0007)."),
    ("en", "prose", "Tokens per second on an RTX4090: about 85 with Llama3.1-8B."),
    ("en", "lookalike", "password: ${{ secrets.DB_PASSWORD }}"),
    ("en", "lookalike", "token: '<paste token here>'"),
    ("de", "prose", "Passwort-Reset funktioniert wieder seit Version 2.4.1."),
    ("de", "prose", "Das Token läuft nach 30 Tagen ab, siehe Ticket OPS-1177."),
    ("de", "prose", "Kennwortrichtlinie: mindestens 14 Zeichen ab 01.07.2025."),
    ("fr", "prose", "Le mot de passe expire après 90 jours (politique PSSI-3)."),
    ("fr", "prose", "Les jetons sont limités à 4096 par requête."),
    ("es", "prose", "La contraseña caduca el 31/12/2025."),
    ("es", "prose", "Clave: usar la del llavero de macOS."),
    ("it", "prose", "La password scade il 15/09 alle 18:00."),
    ("pt", "prose", "A senha expira em 30 dias, conforme a política v3."),
    ("nl", "prose", "Het wachtwoord verloopt op 1 juli 2025."),
    ("ru", "prose", "Срок действия пароля истекает 01.09.2025."),
    ("pl", "prose", "Hasło wygasa 30.06.2025 o 12:00."),
    ("tr", "prose", "Şifre 90 gün sonra sona erer (politika v2)."),
    ("zh", "prose", "密码有效期为90天，详见安全规范V2.1。"),
    ("zh", "prose", "令牌数量上限是4096。"),
    ("ja", "prose", "パスワードの有効期限は90日です（規程v2.1）。"),
    ("ko", "prose", "비밀번호 유효기간은 90일입니다 (정책 v2.1)."),
    ("any", "config", "password:\n  length: 16\n  symbols: true\n"),
    ("any", "config", "auth:\n  provider: oidc\n  issuer: https://login.example.com\n"),
    ("any", "url", "https://login.example.com/oauth2/token?grant_type=client_credentials"),
    ("any", "lookalike", "sha256:" + _HASH),
    ("any", "lookalike", "ssh-ed25519 " + _PUBKEY + " deploy@ci"),
]

# --- batch 5: blind (written before reading the guard's source; first measured at 86.2%,
# FPR 0%: en 75, de 77, fr 75, es 100, it 90, pt 90, nl 80, ru 85, pl 100, tr 83, zh 92,
# ja 92, ko 67, any 93 %; prose 85, config 88, obfuscated 80, url 100, lookalike 100 %) -----
#
# One miss was the case's fault: an OpenSSH key's secret pointed at its body line while the
# guard reports a key on its BEGIN line; that case now holds the whole block as its secret.
#
# Templates hold one value placeholder: {pw}, {tok}, {phrase} (four words), {uuid}, {b64pw}
# (a password base64-encoded, as in a Kubernetes Secret), {basic} (user:password in base64),
# {jwt}, {sshkey} (a whole OpenSSH private-key block), or a class and a length: {alnumN},
# {hexN}, {b64N}, {urlN}, {upN} (A-Z and 2-7), {digN}.  A "|zw", "|fw", "|spaced", "|shy"
# or "|dash" tail writes the value obfuscated (a zero-width space, full-width forms,
# spaced-out letters, soft hyphens, a dash in the middle); the case's secret is the value as
# it appears in the text.

_PLACEHOLDER = re.compile(
    r"\{(pw|tok|phrase|uuid|b64pw|basic|jwt|sshkey|alnum|hex|b64|url|up|dig)"
    r"(\d*)(?:\|(zw|fw|spaced|shy|dash))?\}"
)
_CLASSES = {
    "alnum": ALNUM,
    "hex": HEX,
    "b64": B64,
    "url": URLSAFE,
    "up": UPPER + "234567",
    "dig": DIGITS,
}


def _obfuscate(value: str, how: str) -> str:
    if how == "zw":
        mid = len(value) // 2
        return value[:mid] + "\u200b" + value[mid:]
    if how == "fw":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)
    if how == "spaced":
        return " ".join(value)
    if how == "dash":
        return value[: len(value) // 2] + "-" + value[len(value) // 2 :]
    third = max(1, len(value) // 3)
    return value[:third] + "\u00ad" + value[third : 2 * third] + "\u00ad" + value[2 * third :]


def _value(seed: str, i: int, name: str, size: str) -> str:
    rng = random.Random(seed)
    if name == "pw":
        return _pw(seed)
    if name == "tok":
        return _token(seed, 24 + i % 17)
    if name == "phrase":
        return " ".join(rng.choice(_WORDS).lower() for _ in range(4))
    if name == "uuid":
        return uuid(seed)
    if name == "b64pw":
        return base64.b64encode(_pw(seed).encode()).decode()
    if name == "basic":
        return base64.b64encode(f"deploy:{_pw(seed)}".encode()).decode()
    if name == "jwt":
        return jwt(seed)
    if name == "sshkey":
        body = "b3BlbnNzaC1rZXktdjEAAAAA" + tok(seed, B64, 46)
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    return tok(seed, _CLASSES[name], int(size))


def _pos_blind(batch: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    """Like `_pos`, with the richer placeholders described above."""
    cases: list[Case] = []
    for i, (lang, kind, template) in enumerate(rows):
        match = _PLACEHOLDER.search(template)
        assert match is not None, template
        name, size, how = match.groups()
        value = _value(f"{batch}-{lang}-{i}", i, name, size)
        if how:
            value = _obfuscate(value, how)
        text = template[: match.start()] + value + template[match.end() :]
        cases.append(Case(f"{batch}-p{i:03d}-{lang}-{kind}", lang, kind, text, value))
    return cases


_SLACK_IDS = (
    "T0" + tok("b5-slack-t", UPPER + DIGITS, 8) + "/B0" + tok("b5-slack-b", UPPER + DIGITS, 8)
)
_SHA1 = tok("b5-sha1", HEX, 40)
_SHA256 = tok("b5-sha256", HEX, 64)
_SHORT = tok("b5-short", HEX, 7)
_UUID5 = uuid("b5-uuid")
_BCRYPT = "$2b$12$" + tok("b5-bcrypt", ALNUM + "./", 53)
_ARGON = "$argon2id$v=19$m=65536,t=3,p=4$" + tok("b5-as", B64, 22) + "$" + tok("b5-ah", B64, 43)
_SRI = "sha512-" + tok("b5-sri", B64, 86) + "=="
_GOSUM = "h1:" + tok("b5-gosum", B64, 43) + "="
_FPR = "SHA256:" + tok("b5-fpr", B64, 43)
_PGP = " ".join(tok(f"b5-pgp{i}", HEX.upper(), 4) for i in range(10))
_CERT = "-----BEGIN CERTIFICATE-----\n" + pem_body("b5-cert", 3) + "\n-----END CERTIFICATE-----"
_PUBPEM = "-----BEGIN PUBLIC KEY-----\n" + pem_body("b5-pub", 2) + "\n-----END PUBLIC KEY-----"
_ED_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("b5-edpub", B64, 43)
_PNG = "iVBORw0KGgoAAAANSUhEUgAA" + tok("b5-png", B64, 80)

_BLIND_POS: list[tuple[str, str, str]] = [
    # en: chat, meeting notes, runbooks, commits, shell history
    ("en", "prose", "hey, staging db pw is {pw} - pls don't paste it in #general"),
    (
        "en",
        "prose",
        "Meeting notes 14/03\n- rotate creds after audit\n- new admin password → {pw}\n",
    ),
    (
        "en",
        "prose",
        "Runbook: ssh to bastion, `sudo -u postgres psql`, and when it asks for the password "
        "type {pw}",
    ),
    ("en", "prose", "fix(ci): temporary deploy token until vault works\n\nDEPLOY_TOKEN={tok}\n"),
    ("en", "config", "$ export GITHUB_TOKEN=ghp_{alnum36}\n$ gh repo list"),
    ("en", "config", "curl -s -H 'Authorization: Bearer {tok}' https://api.example.com/v2/users"),
    ("en", "config", "mysql -uroot -p{pw} -h db.internal app_prod"),
    ("en", "config", "docker login -u deploy -p {pw} registry.example.com"),
    ("en", "prose", "Guest Wi-Fi: OfficeGuest / {pw}"),
    ("en", "prose", "my phone unlock code is {dig6}, in case you need to grab the 2FA"),
    ("en", "prose", "GitHub recovery codes (keep safe):\n{hex10|dash}\n"),
    ("en", "config", "| service | user | password |\n|---|---|---|\n| grafana | admin | {pw} |\n"),
    ("en", "prose", "GPG passphrase: {phrase}"),
    ("en", "prose", "Card PIN is {dig4}, don't tell anyone"),
    ("en", "config", "sshpass -p '{pw}' ssh deploy@10.0.4.17"),
    ("en", "prose", "Creds for the vendor portal — user: acme-ops, pass: {pw}"),
    # de
    ("de", "prose", "Kennwort für den Router: {pw}"),
    ("de", "prose", "Zugangsdaten Testsystem: Benutzer admin, Kennwort {pw}"),
    ("de", "prose", "Das WLAN-Passwort lautet {pw}"),
    ("de", "prose", "Hier die Zugangsdaten fürs Jira: max.mustermann / {pw}"),
    ("de", "prose", "PIN der SIM-Karte: {dig4}"),
    ("de", "prose", "Entsperrcode fürs Diensthandy ist {dig6}"),
    (
        "de",
        "prose",
        "Besprechung 12.03.: neues Root-Passwort → {pw} (bitte ins KeePass übernehmen)",
    ),
    ("de", "prose", "API-Schlüssel für das Wetter-Widget: {tok}"),
    ("de", "config", "datenbank:\n  benutzer: app\n  passwort: {pw}\n"),
    ("de", "prose", "Melde dich mit dem Passwort `{pw}` an und ändere es sofort."),
    ("de", "prose", "Das Geheimwort für den Tresor ist {pw}"),
    ("de", "obfuscated", "PASSWORT: {pw|spaced}"),
    ("de", "prose", "Zugangstoken fürs Monitoring: {tok}"),
    # fr
    ("fr", "prose", "Le mot de passe du wifi c'est {pw}"),
    ("fr", "prose", "mdp : {pw}"),
    ("fr", "prose", "identifiants : jean.dupont / {pw}"),
    ("fr", "prose", "Code PIN de la carte : {dig4}"),
    ("fr", "prose", "Voici le jeton d'accès : {tok}"),
    ("fr", "prose", "compte admin, mot de passe « {pw} »"),
    ("fr", "prose", "clé API du service météo → {tok}"),
    ("fr", "config", "[base]\nutilisateur = app\nmotdepasse = {pw}\n"),
    ("fr", "prose", "Le code de déverrouillage du téléphone est {dig6}."),
    ("fr", "prose", "Réunion du 3 mars : on a changé le mot de passe du serveur en {pw}"),
    ("fr", "obfuscated", "mot de passe : {pw|zw}"),
    ("fr", "prose", "phrase secrète de la clé GPG : {phrase}"),
    # es
    ("es", "prose", "La contraseña del wifi es {pw}"),
    ("es", "prose", "contraseña: {pw}"),
    ("es", "prose", "la clave del router es {pw}"),
    ("es", "prose", "usuario: admin / contraseña: {pw}"),
    ("es", "prose", "El PIN de la tarjeta es {dig4}"),
    ("es", "prose", "token de acceso: {tok}"),
    ("es", "prose", "credenciales del servidor → root:{pw}"),
    ("es", "prose", "la pass del NAS es {pw}"),
    ("es", "config", "base_de_datos:\n  usuario: app\n  contrasena: {pw}\n"),
    ("es", "prose", "Te paso la clave de API: `{tok}`"),
    ("es", "obfuscated", "Contraseña: {pw|fw}"),
    # it
    ("it", "prose", "La password del wifi è {pw}"),
    ("it", "prose", "parola d'ordine: {pw}"),
    ("it", "prose", "chiave API: {tok}"),
    ("it", "prose", "credenziali: mario.rossi / {pw}"),
    ("it", "prose", "PIN del bancomat: {dig5}"),
    ("it", "prose", "codice di sblocco del telefono: {dig6}"),
    ("it", "prose", "pwd: {pw}"),
    ("it", "prose", "Ecco il token di accesso `{tok}`"),
    ("it", "prose", "Riunione: la nuova password del gestionale è «{pw}»"),
    ("it", "config", "database:\n  utente: app\n  password: {pw}\n"),
    # pt
    ("pt", "prose", "A senha do wifi é {pw}"),
    ("pt", "prose", "senha: {pw}"),
    ("pt", "prose", "palavra-passe: {pw}"),
    ("pt", "prose", "chave da API: {tok}"),
    ("pt", "prose", "credenciais: joao.silva / {pw}"),
    ("pt", "prose", "PIN do cartão: {dig4}"),
    ("pt", "prose", "código de desbloqueio do celular: {dig6}"),
    ("pt", "prose", "token de acesso → {tok}"),
    ("pt", "prose", "Mudei a senha do servidor para {pw}"),
    ("pt", "obfuscated", "senha: {pw|shy}"),
    # nl
    ("nl", "prose", "Het wachtwoord van de wifi is {pw}"),
    ("nl", "prose", "wachtwoord: {pw}"),
    ("nl", "prose", "ww: {pw}"),
    ("nl", "prose", "inloggegevens: jan.jansen / {pw}"),
    ("nl", "prose", "pincode van de pas: {dig4}"),
    ("nl", "prose", "API-sleutel: {tok}"),
    ("nl", "prose", "toegangstoken: {tok}"),
    ("nl", "prose", "Notulen: het nieuwe beheerderswachtwoord is {pw}"),
    ("nl", "config", "database:\n  gebruiker: app\n  wachtwoord: {pw}\n"),
    ("nl", "prose", "De ontgrendelcode van de telefoon is {dig6}"),
    # ru
    ("ru", "prose", "Пароль от вайфая: {pw}"),
    ("ru", "prose", "пароль — {pw}"),
    ("ru", "prose", "логин admin, пароль {pw}"),
    ("ru", "prose", "Зайди под паролем {pw}, потом поменяй"),
    ("ru", "prose", "ПИН-код карты: {dig4}"),
    ("ru", "prose", "токен доступа: {tok}"),
    ("ru", "prose", "ключ API: {tok}"),
    ("ru", "prose", "код разблокировки телефона {dig6}"),
    ("ru", "prose", "учётные данные: ivanov / {pw}"),
    ("ru", "prose", "пасс от роутера: {pw}"),
    ("ru", "prose", "Поменял пароль на {pw}"),
    ("ru", "config", "база:\n  пользователь: app\n  пароль: {pw}\n"),
    ("ru", "obfuscated", "Пароль: {pw|zw}"),
    # pl
    ("pl", "prose", "Hasło do wifi: {pw}"),
    ("pl", "prose", "hasło to {pw}"),
    ("pl", "prose", "Zaloguj się hasłem {pw}"),
    ("pl", "prose", "nowe hasło: {pw}"),
    ("pl", "prose", "kod PIN do karty: {dig4}"),
    ("pl", "prose", "token dostępu: {tok}"),
    ("pl", "prose", "klucz API: {tok}"),
    ("pl", "prose", "dane logowania: jan.kowalski / {pw}"),
    ("pl", "prose", "Nie zapomnij hasła: {pw}"),
    ("pl", "prose", "Zmieniłem hasło na {pw}"),
    ("pl", "config", "baza:\n  uzytkownik: app\n  haslo: {pw}\n"),
    # tr
    ("tr", "prose", "Wifi şifresi: {pw}"),
    ("tr", "prose", "şifre: {pw}"),
    ("tr", "prose", "parola: {pw}"),
    ("tr", "prose", "Sunucunun şifresi {pw}"),
    ("tr", "prose", "kullanıcı adı: admin, şifre: {pw}"),
    ("tr", "prose", "PIN kodu: {dig4}"),
    ("tr", "prose", "API anahtarı: {tok}"),
    ("tr", "prose", "Şifreyi {pw} olarak değiştirdim"),
    ("tr", "prose", "telefonun kilit kodu {dig6}"),
    ("tr", "prose", "giriş bilgileri: ahmet / {pw}"),
    ("tr", "prose", "erişim belirteci: {tok}"),
    ("tr", "obfuscated", "ŞİFRE: {pw|fw}"),
    # zh
    ("zh", "prose", "WiFi密码：{pw}"),
    ("zh", "prose", "密码是{pw}"),
    ("zh", "prose", "口令：{pw}"),
    ("zh", "prose", "密钥：{tok}"),
    ("zh", "prose", "令牌：{tok}"),
    ("zh", "prose", "账号：admin 密码：{pw}"),
    ("zh", "prose", "银行卡密码 {dig6}"),
    ("zh", "prose", "手机解锁密码是{dig6}"),
    ("zh", "prose", "阿里云 AccessKey Secret：{alnum30}"),
    ("zh", "prose", "登录密码改成了{pw}，记得更新文档"),
    ("zh", "prose", "密碼：{pw}"),
    ("zh", "obfuscated", "数据库密码：{pw|fw}"),
    ("zh", "prose", "会议纪要：测试环境root密码更新为「{pw}」"),
    # ja
    ("ja", "prose", "パスワード：{pw}"),
    ("ja", "prose", "Wi-Fiのパスワードは{pw}です"),
    ("ja", "prose", "暗証番号は{dig4}です"),
    ("ja", "prose", "APIキー：{tok}"),
    ("ja", "prose", "アクセストークン：{tok}"),
    ("ja", "prose", "ID: admin / PW: {pw}"),
    ("ja", "prose", "初期パスワードは「{pw}」です"),
    ("ja", "prose", "スマホのパスコード：{dig6}"),
    ("ja", "prose", "共有フォルダのパスワードを{pw}に変更しました"),
    ("ja", "obfuscated", "パスワード：{pw|fw}"),
    ("ja", "config", "データベース:\n  ユーザー: app\n  パスワード: {pw}\n"),
    ("ja", "prose", "議事録：本番DBのパスワードは {pw} に更新済み"),
    # ko
    ("ko", "prose", "비밀번호: {pw}"),
    ("ko", "prose", "와이파이 비번은 {pw}"),
    ("ko", "prose", "암호: {pw}"),
    ("ko", "prose", "비밀번호는 {pw}입니다"),
    ("ko", "prose", "API 키: {tok}"),
    ("ko", "prose", "액세스 토큰: {tok}"),
    ("ko", "prose", "카드 비밀번호 {dig4}"),
    ("ko", "prose", "휴대폰 잠금 비밀번호 {dig6}"),
    ("ko", "prose", "아이디 admin / 비번 {pw}"),
    ("ko", "prose", "서버 비밀번호를 {pw}(으)로 바꿨어요"),
    ("ko", "obfuscated", "비밀번호: {pw|spaced}"),
    ("ko", "prose", "회의록: 운영 DB 비밀번호 → {pw}"),
    # any: connection strings, config formats, vendor tokens
    ("any", "url", "DATABASE_URL=postgres://app:{pw}@db.internal:5432/app"),
    ("any", "url", "REDIS_URL=redis://:{pw}@cache.internal:6379/0"),
    ("any", "url", "mongodb+srv://admin:{pw}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true"),
    ("any", "url", "amqp://svc:{pw}@rabbit.internal:5672/%2F"),
    ("any", "url", "jdbc:mysql://db.internal:3306/app?user=app&password={pw}&useSSL=true"),
    ("any", "config", "Server=tcp:sql.example.net,1433;Database=app;User Id=sa;Password={pw};"),
    (
        "any",
        "config",
        (
            "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={b6486}==;EndpointSuf"
            "fix=core.windows.net"
        ),
    ),
    (
        "any",
        "config",
        "apiVersion: v1\nkind: Secret\n"
        "metadata:\n  name: db\n"
        "type: Opaque\ndata:\n"
        "  password: {b64pw}\n",
    ),
    (
        "any",
        "config",
        "services:\n  db:\n    image: postgres:16\n"
        "    environment:\n      - POSTGRES_PASSWORD={pw}\n",
    ),
    (
        "any",
        "config",
        "<dataSource>\n  <user>app</user>\n  <password>{pw}</password>\n</dataSource>",
    ),
    ("any", "config", "spring.datasource.password={pw}"),
    ("any", "config", '[database]\nhost = "db.internal"\npassword = "{pw}"\n'),
    ("any", "config", "[client]\nuser=root\npassword={pw}\n"),
    ("any", "config", '{"username": "svc-report", "password": "{pw}"}'),
    (
        "any",
        "config",
        '{\n  "type": "service_account",\n'
        '  "project_id": "acme-prod",\n'
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        "MIIEv{b6460}\\n-----END PRIVATE KEY-----\\n"
        '"\n}',
    ),
    (
        "any",
        "config",
        "# deploy key for the staging box\n{sshkey}\n",
    ),
    ("any", "config", "machine api.heroku.com\n  login ops@example.com\n  password {uuid}\n"),
    ("any", "config", "db.internal:5432:app:app_user:{pw}"),
    ("any", "config", "//registry.npmjs.org/:_authToken=npm_{alnum36}"),
    ("any", "config", "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{url60}\n"),
    ("any", "config", "SLACK_BOT_TOKEN=xoxb-7731924051-8124419921734-{alnum24}"),
    ("any", "url", "https://hooks.slack.com/services/" + _SLACK_IDS + "/{alnum24}"),
    ("any", "config", "STRIPE_SECRET_KEY=sk_live_{alnum24}"),
    ("any", "config", "[default]\naws_access_key_id = AKIA{up16}\n"),
    (
        "any",
        "config",
        "[default]\naws_access_key_id = AKIA"
        + tok("b5-akia", UPPER + "234567", 16)
        + "\naws_secret_access_key = {b6440}\n",
    ),
    ("any", "config", "OPENAI_API_KEY=sk-proj-{url64}"),
    ("any", "config", "ANTHROPIC_API_KEY=sk-ant-api03-{url93}AA"),
    (
        "any",
        "config",
        "git remote set-url origin https://oauth2:glpat-{url20}@gitlab.com/acme/infra.git",
    ),
    ("any", "config", "Authorization: Basic {basic}"),
    ("any", "config", "access_token: {jwt}"),
    ("any", "config", "HF_TOKEN=hf_{alnum34}"),
    (
        "any",
        "config",
        "helm upgrade --install pg bitnami/postgresql --set auth.postgresPassword={pw}",
    ),
    ("any", "config", "ansible_become_pass: {pw}"),
    ("any", "config", "PGPASSWORD={pw} psql -h db.internal -U app"),
    ("any", "url", "https://deploy:{pw}@git.example.com/acme/site.git"),
    ("any", "url", "https://api.example.com/v1/report?api_key={hex32}&format=csv"),
    ("any", "obfuscated", "token=ghp_{alnum36|zw}"),
    ("any", "lookalike", "HEROKU_API_KEY={uuid}"),
    ("any", "lookalike", "api_key: {hex40}"),
    ("any", "config", 'db_password = "{pw}"'),
]

_BLIND_NEG: list[tuple[str, str, str]] = [
    # en
    (
        "en",
        "prose",
        "Reset your password at https://id.example.com/reset - the link expires in 24h.",
    ),
    ("en", "prose", "Password policy: min 12 chars, one digit, one symbol; rotate every 90 days."),
    ("en", "prose", "The CI token lives in Vault at secret/data/ci/github, ask #infra for access."),
    ("en", "lookalike", "commit " + _SHA1 + "\n\n    fix: password reset email template"),
    ("en", "prose", "PIN must be 4-6 digits; after 3 wrong tries the card is locked."),
    ("en", "config", "mysql -u root -p -h db.internal   # prompts for the password"),
    ("en", "prose", "Action item: Maria to rotate the staging password on Friday."),
    # de
    ("de", "prose", "Passwort vergessen? Unter https://konto.example.de/zuruecksetzen neu setzen."),
    ("de", "prose", "Das Kennwort muss mindestens 12 Zeichen lang sein und eine Ziffer enthalten."),
    ("de", "prose", "Die Zugangsdaten liegen im KeePass unter „Prod/DB“."),
    (
        "de",
        "lookalike",
        "Überweisung an IBAN DE89 3704 0044 0532 0130 00, Rechnungsnummer 2024-00417",
    ),
    ("de", "prose", "Passwort: ******** (siehe Tresor)"),
    ("de", "prose", "Bitte ändert eure Passwörter bis Freitag."),
    # fr
    (
        "fr",
        "prose",
        "Mot de passe oublié ? Cliquez sur « Réinitialiser » sur la page de connexion.",
    ),
    ("fr", "prose", "Le mot de passe doit contenir au moins 12 caractères."),
    ("fr", "prose", "mdp : voir le coffre-fort Bitwarden (dossier Infra)"),
    ("fr", "lookalike", "Numéro de commande : FR-2024-88412, suivi colis 6A19283746501"),
    ("fr", "config", "jeton: <votre-jeton>"),
    # es
    (
        "es",
        "prose",
        "¿Olvidaste tu contraseña? Restablécela en https://cuenta.example.es/recuperar",
    ),
    ("es", "prose", "La contraseña debe tener al menos 12 caracteres."),
    ("es", "config", "clave: ${DB_PASSWORD}"),
    ("es", "lookalike", "Referencia de pago: ES91 2100 0418 4502 0005 1332"),
    ("es", "prose", "El token caduca en 3600 segundos."),
    # it
    ("it", "prose", "Hai dimenticato la password? Reimpostala da Impostazioni → Sicurezza."),
    ("it", "prose", "La password deve avere almeno 12 caratteri."),
    ("it", "config", "password: changeme   # da cambiare al primo accesso"),
    ("it", "lookalike", "Versione 2.14.3 (build 20240517.4), checksum " + _SHA256[:16] + "…"),
    ("it", "prose", "La password del wifi è scritta sul router in sala riunioni."),
    # pt
    ("pt", "prose", "Esqueceu a senha? Redefina em https://conta.example.com.br/senha"),
    ("pt", "prose", "A senha deve ter no mínimo 12 caracteres."),
    ("pt", "config", "senha: xxxxxxxx"),
    ("pt", "lookalike", "Número do pedido: 7734-2291-0042, nota fiscal 35240512345678000195"),
    ("pt", "prose", "A senha foi trocada ontem, peça a nova ao suporte."),
    # nl
    ("nl", "prose", "Wachtwoord vergeten? Stel het opnieuw in via de inlogpagina."),
    ("nl", "prose", "Het wachtwoord moet minstens 12 tekens bevatten."),
    ("nl", "prose", "wachtwoord: staat in 1Password onder 'Kantoor wifi'"),
    ("nl", "lookalike", "Huisstijl: primair #3fa9c2, secundair #1b2a41, lettertype Inter 16px"),
    ("nl", "prose", "Pincode vergeten? Bel de bank op 020-1234567."),
    # ru
    ("ru", "prose", "Забыли пароль? Восстановите его по ссылке на странице входа."),
    ("ru", "prose", "Пароль должен содержать не менее 12 символов."),
    ("ru", "prose", "пароль хранится в Vault (secret/prod/db), доступ через заявку"),
    ("ru", "lookalike", "Коммит " + _SHORT + ": исправлена смена пароля"),
    ("ru", "prose", "Смените пароль до пятницы, старый перестанет работать."),
    # pl
    ("pl", "prose", "Nie pamiętasz hasła? Zresetuj je na stronie logowania."),
    ("pl", "prose", "Hasło musi mieć co najmniej 12 znaków."),
    ("pl", "config", "hasło: <twoje-hasło>"),
    ("pl", "lookalike", "Faktura nr FV/2024/05/117, NIP 526-000-12-46"),
    ("pl", "prose", "Hasła trzymamy w menedżerze haseł, nie w notatkach."),
    # tr
    ("tr", "prose", "Şifrenizi mi unuttunuz? Giriş sayfasından sıfırlayın."),
    ("tr", "prose", "Şifre en az 12 karakter olmalıdır."),
    ("tr", "config", "parola: ${DB_PASS}"),
    ("tr", "lookalike", "Sipariş no: 448213, kargo takip: 7312 4490 1183"),
    ("tr", "prose", "Şifreyi değiştirdim, yenisini kasaya koydum."),
    # zh
    ("zh", "prose", "忘记密码？请访问 https://id.example.cn/reset 重置。"),
    ("zh", "prose", "密码长度至少12位，需包含数字和符号。"),
    ("zh", "prose", "密码见密码管理器中的“生产数据库”条目。"),
    ("zh", "lookalike", "提交 " + _SHORT + "：修复密码重置邮件"),
    ("zh", "lookalike", "订单号：20240517883412，快递单号 SF1234567890123"),
    # ja
    ("ja", "prose", "パスワードをお忘れの方はログイン画面から再設定してください。"),
    ("ja", "prose", "パスワードは12文字以上で設定してください。"),
    ("ja", "prose", "パスワード：＊＊＊＊（管理者に確認）"),
    ("ja", "lookalike", "ISBN 978-4-06-293425-7（第3版）"),
    ("ja", "prose", "暗証番号を3回間違えるとロックされます。"),
    # ko
    ("ko", "prose", "비밀번호를 잊으셨나요? 로그인 화면에서 재설정하세요."),
    ("ko", "prose", "비밀번호는 12자 이상이어야 합니다."),
    ("ko", "prose", "비밀번호: (관리자에게 문의)"),
    ("ko", "lookalike", "주문번호: 2024-0517-8834, 송장번호 6012-3344-9981"),
    ("ko", "prose", "비번 바꿨어요, 새 비번은 금고에 있어요."),
    # any
    ("any", "lookalike", _SHA256 + "  memdir-1.4.0.tar.gz"),
    ("any", "lookalike", "image: ghcr.io/acme/api@sha256:" + _SHA256),
    ("any", "lookalike", '"integrity": "' + _SRI + '"'),
    ("any", "lookalike", "golang.org/x/text v0.14.0 " + _GOSUM),
    ("any", "lookalike", "request_id=" + _UUID5 + " status=200 took=12ms"),
    ("any", "lookalike", "password_hash: " + _BCRYPT),
    ("any", "lookalike", "hash = '" + _ARGON + "'"),
    ("any", "lookalike", "256 " + _FPR + " deploy@ci (ED25519)"),
    ("any", "lookalike", "Key fingerprint = " + _PGP),
    ("any", "lookalike", _CERT),
    ("any", "lookalike", _PUBPEM),
    ("any", "lookalike", "ssh-ed25519 " + _ED_PUB + " ops@laptop"),
    ("any", "lookalike", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("any", "config", "password: ${DB_PASSWORD}"),
    ("any", "config", "password: {{ .Values.db.password }}"),
    (
        "any",
        "config",
        "env:\n  - name: DB_PASSWORD\n"
        "    valueFrom:\n      secretKeyRef:\n"
        "        name: db\n        key: password\n",
    ),
    ("any", "config", 'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user'),
    ("any", "config", 'echo "$CR_PAT" | docker login ghcr.io -u acme --password-stdin'),
    ("any", "lookalike", '<img src="data:image/png;base64,' + _PNG + '">'),
    ("any", "config", '"password": {"type": "string", "minLength": 12, "writeOnly": true}'),
    ("any", "config", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ("any", "config", 'api_key = "YOUR_API_KEY"'),
    (
        "any",
        "config",
        "db:\n  password_file: /run/secrets/db_password\n  tls_key: /etc/ssl/private/server.key\n",
    ),
    ("any", "lookalike", "v2.3.1-rc.4+build.8812 / node 20.11.1 / ~/.ssh/id_ed25519.pub"),
]

BLIND: tuple[Case, ...] = tuple(_pos_blind("b", _BLIND_POS) + _neg("b", _BLIND_NEG))

TUNING: tuple[Case, ...] = tuple(_pos("t", _TUNING_POS) + _neg("t", _TUNING_NEG))
HELD: tuple[Case, ...] = tuple(_pos("h", _HELD_POS) + _neg("h", _HELD_NEG))
FRESH: tuple[Case, ...] = tuple(_pos("f", _FRESH_POS) + _neg("f", _FRESH_NEG))
LATE: tuple[Case, ...] = tuple(_pos("l", _LATE_POS) + _neg("l", _LATE_NEG))
# --- batch 6: sixth (written blind, before reading the guard's source; first measured at
# 71.3% (114/160), FPR 0% (0/85): en 54, de 64, fr 60, es 70, it 80, pt 60, nl 70, ru 70,
# pl 70, tr 70, zh 82, ja 60, ko 73, any 92 %; prose 66, config 88, obfuscated 15, url 100 %,
# lookalike FPR 0 %) ---------------------------------------------------------------------
#
# Chat messages, abbreviated and disguised labels, values on the next line, passwords with
# spaces or quotes, tables, code spans and fences, many config formats, odd URL schemes,
# vendor keys, key blocks; look-alikes a naive guard refuses.  Placeholders as in batch 5,
# plus {pwsp} (a password with spaces), {pwq} (a password with an apostrophe), {tg}
# (Telegram bot), {discord}, {slack} (xoxb-), {sendgrid}, {aws} (an AWS secret access key),
# {azure} (an Azure AccountKey), {ghpat} (github_pat_), {ant} (sk-ant-), {pgpkey} (a PGP
# private key block), {pemenc} (a legacy encrypted PEM key) and {p8enc} (an encrypted
# PKCS#8 block).

_PLACEHOLDER6 = re.compile(
    r"\{(pwsp|pwq|tg|discord|slack|sendgrid|aws|azure|ghpat|ant|pgpkey|pemenc|p8enc|"
    r"pw|tok|phrase|uuid|b64pw|basic|jwt|sshkey|alnum|hex|b64|url|up|dig)"
    r"(\d*)(?:\|(zw|fw|spaced|shy|dash))?\}"
)


def _value6(seed: str, i: int, name: str, size: str) -> str:
    rng = random.Random(seed)
    w1, w2 = rng.choice(_WORDS), rng.choice(_WORDS)
    digits = "".join(rng.choice(string.digits) for _ in range(3))
    if name == "pwsp":
        return f"{w1} {w2.lower()} {digits}{rng.choice(_SYMBOLS)}"
    if name == "pwq":
        return f"{w1}'{w2}{digits}{rng.choice('!#%*')}"
    if name == "tg":
        return tok(seed, DIGITS, 10) + ":AA" + tok(seed + "t", URLSAFE, 33)
    if name == "discord":
        user = base64.b64encode(("1" + tok(seed, DIGITS, 17)).encode()).decode().rstrip("=")
        return f"{user}.{tok(seed + 'a', URLSAFE, 6)}.{tok(seed + 'b', URLSAFE, 38)}"
    if name == "slack":
        return f"xoxb-{tok(seed, DIGITS, 12)}-{tok(seed + 'b', DIGITS, 13)}-{tok(seed, ALNUM, 24)}"
    if name == "sendgrid":
        return f"SG.{tok(seed, URLSAFE, 22)}.{tok(seed + 's', URLSAFE, 43)}"
    if name == "aws":
        return tok(seed, ALNUM + "/+", 40)
    if name == "azure":
        return tok(seed, B64, 86) + "=="
    if name == "ghpat":
        return f"github_pat_{tok(seed, ALNUM, 22)}_{tok(seed + 'g', ALNUM, 59)}"
    if name == "ant":
        return "sk-ant-api03-" + tok(seed, URLSAFE, 93) + "AA"
    if name == "pgpkey":
        body = "\n".join("lQ" + tok(f"{seed}{k}", B64, 62) for k in range(3))
        return (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            f"{body}\n={tok(seed, B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
        )
    if name == "pemenc":
        return (
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
            f"DEK-Info: AES-128-CBC,{tok(seed, HEX.upper(), 32)}\n\n"
            f"{pem_body(seed, 3)}\n-----END RSA PRIVATE KEY-----"
        )
    if name == "p8enc":
        return (
            f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{pem_body(seed, 3)}\n"
            "-----END ENCRYPTED PRIVATE KEY-----"
        )
    return _value(seed, i, name, size)


def _pos_sixth(batch: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    """Like `_pos_blind`, with the extra placeholders above."""
    cases: list[Case] = []
    for i, (lang, kind, template) in enumerate(rows):
        match = _PLACEHOLDER6.search(template)
        assert match is not None, template
        name, size, how = match.groups()
        value = _value6(f"{batch}-{lang}-{i}", i, name, size)
        if how:
            value = _obfuscate(value, how)
        text = template[: match.start()] + value + template[match.end() :]
        case = Case(f"{batch}-p{i:03d}-{lang}-{kind}", lang, kind, text, value)
        assert case.line == template[: match.start()].count("\n") + 1, case.id
        cases.append(case)
    return cases


_S6_SHA1 = tok("s6-sha1", HEX, 40)
_S6_SHA256 = tok("s6-sha256", HEX, 64)
_S6_SHA256B = tok("s6-sha256b", HEX, 64)
_S6_DIGEST = tok("s6-digest", HEX, 64)
_S6_UUID = uuid("s6-uuid")
_S6_UUID2 = uuid("s6-uuid2")
_S6_BCRYPT = "$2y$10$" + tok("s6-bcrypt", ALNUM + "./", 53)
_S6_ARGON = "$argon2i$v=19$m=4096,t=3,p=1$" + tok("s6-as", B64, 22) + "$" + tok("s6-ah", B64, 43)
_S6_SRI = "sha384-" + tok("s6-sri", B64, 64)
_S6_CSP = "'sha256-" + tok("s6-csp", B64, 43) + "='"
_S6_ISBN = "978-" + tok("s6-isbn1", DIGITS, 1) + "-" + tok("s6-isbn2", DIGITS, 4) + "-"
_S6_ISBN += tok("s6-isbn3", DIGITS, 4) + "-" + tok("s6-isbn4", DIGITS, 1)
_S6_IBAN = "NL" + tok("s6-iban0", DIGITS, 2) + " " + "RABO" + " "
_S6_IBAN += " ".join(tok(f"s6-iban{k}", DIGITS, 4) for k in range(1, 3)) + " " + "12"
_S6_ORDER = "-".join(tok(f"s6-order{k}", DIGITS, 4) for k in range(3))
_S6_TRACK = "1Z" + tok("s6-track", UPPER + DIGITS, 16)
_S6_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("s6-pub", B64, 43)
_S6_PNG = "iVBORw0KGgoAAAANSUhEUgAA" + tok("s6-png", B64, 72)
_S6_VAULT = "\n".join("          " + tok(f"s6-vault{k}", HEX, 80) for k in range(3))

_SIXTH_POS: list[tuple[str, str, str]] = [
    # en
    ("en", "prose", "hey, the wifi pw is {pw} btw"),
    ("en", "prose", "btw my pin's {dig4}, don't tell anyone lol"),
    ("en", "prose", "The password is below:\n  {pw}\n"),
    ("en", "obfuscated", "Passw0rd: {pw}"),
    ("en", "obfuscated", "P a s s w o r d: {pw}"),
    ("en", "config", "| host | user | pass |\n|------|------|------|\n| db01 | root | {pw} |"),
    ("en", "config", "db01.internal   root   {pw}   # prod, do not share"),
    ("en", "prose", 'the admin password is "{pwsp}" (yes, with the spaces)'),
    ("en", "config", "```\nSLACK_BOT_TOKEN={slack}\n```"),
    ("en", "url", "amqp://guest:{pw}@rabbit.internal:5672/"),
    ("en", "config", "Authorization: Basic {basic}"),
    ("en", "url", "otpauth://totp/ACME:jane@acme.io?secret={up32}&issuer=ACME"),
    ("en", "prose", "Stripe live key for the shop: sk_live_{alnum24}"),
    # de
    ("de", "prose", "hey, das WLAN-Passwort ist übrigens {pw}"),
    ("de", "prose", "kw fürs Büro-WLAN: {pw}"),
    ("de", "prose", "Das Kennwort steht unten:\n    {pw}\n"),
    ("de", "obfuscated", "P a s s w o r t: {pw}"),
    ("de", "prose", "meine PIN lautet {dig4}, bitte nicht weitersagen"),
    ("de", "config", "[datenbank]\nbenutzer = app\npasswort = {pw}\n"),
    ("de", "url", "redis://:{pw}@cache.intern:6379/0"),
    ("de", "prose", "Zugangsdaten fürs NAS: admin / {pw}"),
    ("de", "prose", "Mein neues Passwort lautet „{pwsp}“ – mit Leerzeichen!"),
    ("de", "config", "export HF_TOKEN=hf_{alnum34}"),
    ("de", "prose", "Passwort vom Router geändert, ist jetzt `{pw}`"),
    # fr
    ("fr", "prose", "salut, le mdp du wifi c'est {pw}"),
    ("fr", "prose", "mon code PIN c'est le {dig4}"),
    ("fr", "prose", "Le mot de passe est ci-dessous :\n  {pw}"),
    ("fr", "prose", "mot de passe de la box : « {pwsp} »"),
    ("fr", "config", "MOT_DE_PASSE={pw}"),
    ("fr", "url", "mongodb+srv://admin:{pw}@cluster0.ab12c.mongodb.net/prod"),
    ("fr", "prose", "Identifiants FTP : utilisateur deploy, mdp {pw}"),
    ("fr", "prose", "voici la clé API OpenAI : sk-proj-{url48}"),
    ("fr", "obfuscated", "mdp : {pw|spaced}"),
    (
        "fr",
        "config",
        "<serveur>\n  <utilisateur>admin</utilisateur>\n  <motdepasse>{pw}</motdepasse>",
    ),
    # es
    ("es", "prose", "oye, la contra del wifi es {pw}"),
    ("es", "prose", "mi pin es {dig4}, apúntalo"),
    ("es", "prose", "La contraseña está abajo:\n{pw}"),
    ("es", "prose", "clave: {pw}"),
    ("es", "config", "contraseña = '{pw}'"),
    ("es", "url", "sftp://deploy:{pw}@files.ejemplo.es/subidas"),
    ("es", "prose", "Token del bot de Telegram: {tg}"),
    ("es", "config", "usuario: admin\ncontraseña: {pw}"),
    ("es", "prose", "La clave secreta de AWS es {aws}"),
    ("es", "prose", 'mi contraseña tiene espacios: "{pwsp}"'),
    # it
    ("it", "prose", "ciao, la pw del wifi è {pw}"),
    ("it", "prose", "il mio pin è {dig5}"),
    ("it", "prose", "La password è qui sotto:\n  {pw}"),
    ("it", "prose", "parola d'ordine: {pw}"),
    ("it", "config", 'password: "{pwq}"'),
    ("it", "url", "ldaps://admin:{pw}@ldap.esempio.it:636"),
    ("it", "prose", "credenziali del router: admin / {pw}"),
    ("it", "prose", "Chiave API di Google Maps: AIza{url35}"),
    ("it", "prose", "psw: {pw}"),
    ("it", "obfuscated", "la password è {pw|zw}"),
    # pt
    ("pt", "prose", "oi, a senha do wifi é {pw}"),
    ("pt", "prose", "meu pin é {dig4}"),
    ("pt", "prose", "A senha está abaixo:\n{pw}"),
    ("pt", "prose", "senha: {pwsp}"),
    ("pt", "config", "SENHA_BANCO={pw}"),
    ("pt", "url", "smb://admin:{pw}@nas.local/backup"),
    ("pt", "prose", "token do npm: npm_{alnum36}"),
    ("pt", "prose", "usuário root, senha {pw}"),
    ("pt", "prose", "token do PyPI pra publicar: pypi-AgEIcHlwaS5vcmc{url60}"),
    ("pt", "obfuscated", "s e n h a: {pw}"),
    # nl
    ("nl", "prose", "hé, het wifi ww is {pw}"),
    ("nl", "prose", "mijn pincode is {dig4}"),
    ("nl", "prose", "Het wachtwoord staat hieronder:\n  {pw}"),
    ("nl", "config", "wachtwoord = {pw}"),
    ("nl", "url", "postgresql://beheer:{pw}@db.intern:5432/app"),
    ("nl", "prose", "inlog: admin / {pw}"),
    ("nl", "prose", "GitHub token (fijnmazig): {ghpat}"),
    ("nl", "config", "Wachtwoord: `{pw}`"),
    ("nl", "prose", "de toegangscode voor het alarm is {dig6}"),
    ("nl", "obfuscated", "w a c h t w o o r d: {pw}"),
    # ru
    ("ru", "prose", "привет, пароль от вайфая {pw}"),
    ("ru", "prose", "мой пин {dig4}"),
    ("ru", "prose", "Пароль ниже:\n  {pw}"),
    ("ru", "prose", "пасс: {pw}"),
    ("ru", "config", "пароль = {pw}"),
    ("ru", "url", "ftp://user:{pw}@ftp.example.ru/"),
    ("ru", "prose", "логин admin, пароль {pw}"),
    ("ru", "prose", "токен бота телеграм: {tg}"),
    ("ru", "obfuscated", "П а р о л ь: {pw}"),
    ("ru", "prose", "ключ API Anthropic: {ant}"),
    # pl
    ("pl", "prose", "hej, hasło do wifi to {pw}"),
    ("pl", "prose", "mój pin to {dig4}"),
    ("pl", "prose", "Hasło poniżej:\n{pw}"),
    ("pl", "prose", "hasło: „{pwsp}”"),
    ("pl", "config", "HASLO={pw}"),
    ("pl", "url", "amqps://app:{pw}@mq.firma.pl/vhost"),
    ("pl", "prose", "login: admin, hasło {pw}"),
    ("pl", "prose", "token Discorda dla bota: {discord}"),
    ("pl", "obfuscated", "h a s ł o: {pw}"),
    ("pl", "prose", "kod PIN do karty: {dig4}"),
    # tr
    ("tr", "prose", "selam, wifi şifresi {pw}"),
    ("tr", "prose", "pin kodum {dig4}"),
    ("tr", "prose", "Şifre aşağıda:\n  {pw}"),
    ("tr", "prose", "parola: {pw}"),
    ("tr", "config", "sifre={pw}"),
    ("tr", "url", "mysql://kullanici:{pw}@db.sirket.com.tr/uygulama"),
    ("tr", "prose", "kullanıcı adı admin, şifre {pw}"),
    ("tr", "prose", "SendGrid API anahtarı: {sendgrid}"),
    ("tr", "obfuscated", "ş i f r e: {pw}"),
    ("tr", "prose", 'şifrem "{pwq}" (tırnak dahil)'),
    # zh
    ("zh", "prose", "wifi密码是{pw}"),
    ("zh", "prose", "我的pin码：{dig6}"),
    ("zh", "prose", "密码如下：\n{pw}"),
    ("zh", "prose", "密码 {pw}"),
    ("zh", "config", "数据库密码={pw}"),
    ("zh", "url", "redis://default:{pw}@10.0.0.5:6379"),
    ("zh", "prose", "账号admin 密码{pw}"),
    ("zh", "prose", "口令：{pw}"),
    ("zh", "prose", "阿里云AccessKeySecret：{alnum30}"),
    ("zh", "obfuscated", "密 码：{pw}"),
    ("zh", "prose", "支付密码是{dig6}"),
    # ja
    ("ja", "prose", "wifiのパスは{pw}です"),
    ("ja", "prose", "暗証番号は{dig4}"),
    ("ja", "prose", "パスワードは以下：\n{pw}"),
    ("ja", "prose", "パスワード：「{pwsp}」"),
    ("ja", "config", "パスワード={pw}"),
    ("ja", "url", "mongodb://root:{pw}@db.example.jp:27017/admin"),
    ("ja", "prose", "ID: admin / PW: {pw}"),
    ("ja", "prose", "Slackのボットトークン：{slack}"),
    ("ja", "obfuscated", "パ ス ワ ー ド：{pw}"),
    ("ja", "prose", "APIキーは{tok}です"),
    # ko
    ("ko", "prose", "와이파이 비번 {pw}"),
    ("ko", "prose", "내 핀번호 {dig4}"),
    ("ko", "prose", "비밀번호는 아래에:\n{pw}"),
    ("ko", "prose", "비밀번호: {pw}"),
    ("ko", "config", "비밀번호={pw}"),
    ("ko", "url", "postgres://admin:{pw}@db.example.kr/app"),
    ("ko", "prose", "아이디 admin 비번 {pw}"),
    ("ko", "prose", "깃랩 토큰 glpat-{url20}"),
    ("ko", "obfuscated", "비 밀 번 호: {pw}"),
    ("ko", "prose", "공동인증서 암호는 {pw}"),
    ("ko", "prose", "계좌 비밀번호 {dig4}"),
    # any: config formats, key blocks, vendor keys
    ("any", "config", '{"username": "svc", "password": "{pw}"}'),
    ("any", "config", "db:\n  user: app\n  pass: {pw}\n"),
    ("any", "config", '[auth]\ntoken = "{tok}"\n'),
    ("any", "config", "[smtp]\nhost=mail.internal\npasswd={pw}\n"),
    ("any", "config", "STRIPE_SECRET_KEY=sk_live_{alnum24}"),
    ("any", "config", '<add key="ApiKey" value="{tok}" />'),
    ("any", "config", "spring.datasource.password={pw}"),
    (
        "any",
        "config",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {b64pw}\n",
    ),
    (
        "any",
        "config",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};"
        "EndpointSuffix=core.windows.net",
    ),
    ("any", "config", "[default]\naws_secret_access_key = {aws}\n"),
    ("any", "config", "TWILIO_AUTH_TOKEN={hex32}"),
    ("any", "config", "Cookie: sessionid={alnum32}; theme=dark"),
    ("any", "config", "Set-Cookie: session={url40}; Path=/; HttpOnly; Secure"),
    ("any", "config", "Authorization: Bearer {jwt}"),
    ("any", "config", "{sshkey}"),
    ("any", "config", "{pgpkey}"),
    ("any", "config", "{pemenc}"),
    ("any", "config", "{p8enc}"),
    ("any", "config", "`{ant}`"),
    ("any", "config", "```bash\nexport PGPASSWORD='{pw}'\n```"),
    ("any", "config", "    environment:\n      - POSTGRES_PASSWORD={pw}\n"),
    ("any", "config", "machine api.heroku.com login me@acme.io password {pw}"),
    ("any", "config", "db.internal:5432:app:app:{pw}"),
    ("any", "url", "https://oauth2:{tok}@gitlab.com/acme/app.git"),
]

_SIXTH_NEG: list[tuple[str, str, str]] = [
    # en
    ("en", "prose", "forgot your password? you can reset it at https://id.example.com/forgot"),
    ("en", "prose", "Passwords must be 12+ characters with a digit and a symbol, rotated yearly."),
    ("en", "prose", "the prod db password is stored in 1Password under 'prod db'"),
    ("en", "prose", "password hint: the name of our first dog"),
    ("en", "lookalike", "Order " + _S6_ORDER + " shipped, UPS tracking " + _S6_TRACK),
    ("en", "prose", "I changed my password yesterday, so the old one won't work anymore."),
    # de
    ("de", "prose", "Passwort vergessen? Einfach auf „Zurücksetzen“ klicken."),
    ("de", "prose", "Kennwortregeln: mindestens 10 Zeichen, davon eine Ziffer."),
    ("de", "prose", "Das WLAN-Passwort steht auf dem Aufkleber unter dem Router."),
    ("de", "lookalike", "Bestellnummer " + _S6_ORDER + ", Sendungsnummer " + _S6_TRACK),
    ("de", "config", "passwort = ${DB_PASSWORT}"),
    # fr
    ("fr", "prose", "mot de passe oublié ? cliquez sur « réinitialiser » sur la page de connexion"),
    ("fr", "prose", "le mdp est dans Bitwarden, dossier « infra »"),
    ("fr", "lookalike", "ISBN " + _S6_ISBN + ", 2e édition"),
    ("fr", "config", "mot_de_passe: <votre-mot-de-passe>"),
    ("fr", "lookalike", "couleur principale #1e90ff, secondaire #ff6347, fond #fafafa"),
    # es
    ("es", "prose", "cambia tu contraseña en https://cuenta.ejemplo.es/cambiar-clave"),
    ("es", "prose", "La contraseña debe tener al menos 10 caracteres y un número."),
    ("es", "config", "contraseña: changeme"),
    ("es", "prose", "pista de la contraseña: el nombre de mi gato"),
    ("es", "lookalike", "número de pedido " + _S6_ORDER),
    # it
    ("it", "prose", "la password è nel gestore (1Password, voce 'VPN')"),
    ("it", "config", "password: ${DB_PASSWORD}"),
    ("it", "lookalike", _S6_SHA256 + "  release-4.2.0.tar.gz"),
    ("it", "lookalike", "versione 4.2.0-beta.3, build 20240311, file /opt/app/conf/app.yaml"),
    ("it", "prose", "ho reimpostato la password, ora funziona"),
    # pt
    ("pt", "prose", "esqueceu a senha? acesse https://conta.exemplo.com.br/recuperar"),
    ("pt", "config", "senha: xxxxxxxx"),
    ("pt", "prose", "A senha deve ter no mínimo 8 caracteres e um número."),
    ("pt", "lookalike", "imagem: ghcr.io/acme/app@sha256:" + _S6_DIGEST),
    ("pt", "lookalike", "caminho: /var/lib/postgresql/data/pg_hba.conf"),
    # nl
    ("nl", "prose", "wachtwoord vergeten? ga naar https://mijn.voorbeeld.nl/herstel"),
    ("nl", "prose", "het wachtwoord staat in de kluis onder 'NAS'"),
    ("nl", "config", "wachtwoord: <jouw-wachtwoord>"),
    ("nl", "lookalike", "commit " + _S6_SHA1 + " lost het inlogprobleem op"),
    ("nl", "lookalike", "Betaling met kenmerk " + _S6_IBAN + ", bestelnummer " + _S6_ORDER),
    # ru
    ("ru", "prose", "пароль хранится в KeePass, запись «сервер»"),
    ("ru", "prose", "требования к паролю: минимум 12 символов"),
    ("ru", "prose", "сбросить пароль можно на https://id.example.ru/reset"),
    ("ru", "config", "пароль: ******"),
    ("ru", "lookalike", "номер заказа " + _S6_UUID),
    # pl
    ("pl", "prose", "hasło jest w menedżerze haseł (Bitwarden)"),
    ("pl", "prose", "zresetuj hasło na https://konto.przyklad.pl/reset"),
    ("pl", "config", "hasło: twoje_haslo"),
    ("pl", "lookalike", "numer przesyłki " + _S6_TRACK),
    ("pl", "prose", "podpowiedź do hasła: imię psa"),
    # tr
    ("tr", "prose", "şifrenizi https://hesap.ornek.com.tr/sifirla adresinden sıfırlayın"),
    ("tr", "prose", "şifre politikası: en az 10 karakter"),
    ("tr", "config", "şifre: ${SIFRE}"),
    ("tr", "lookalike", "sipariş no: " + _S6_ORDER),
    ("tr", "prose", "şifre kasada (1Password, 'sunucu' kaydı)"),
    # zh
    ("zh", "prose", "忘记密码？请访问 https://id.example.cn/reset"),
    ("zh", "prose", "密码至少需要12位，包含数字和符号"),
    ("zh", "prose", "密码保存在1Password的“生产数据库”条目里"),
    ("zh", "lookalike", "提交 " + _S6_SHA1 + " 修复了登录问题"),
    ("zh", "config", "密码：<你的密码>"),
    # ja
    ("ja", "prose", "パスワードを忘れた場合は https://id.example.jp/reset から再設定"),
    ("ja", "prose", "パスワードは12文字以上にしてください"),
    ("ja", "prose", "パスワードは1Passwordの「本番DB」に保存してあります"),
    ("ja", "config", "パスワード：********"),
    ("ja", "lookalike", "注文番号 " + _S6_ORDER),
    # ko
    ("ko", "prose", "비밀번호를 잊으셨나요? https://id.example.kr/reset"),
    ("ko", "prose", "비밀번호는 8자 이상이어야 합니다"),
    ("ko", "prose", "비밀번호는 1Password '운영 DB' 항목에 있어요"),
    ("ko", "config", "비밀번호: <비밀번호>"),
    ("ko", "lookalike", "커밋 " + _S6_SHA1 + " 로그인 버그 수정"),
    # any
    ("any", "config", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("any", "config", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("any", "lookalike", _S6_SHA256 + "  dist/app.tar.gz\n" + _S6_SHA256B + "  dist/app.zip"),
    ("any", "lookalike", "FROM python:3.12-slim@sha256:" + _S6_DIGEST),
    ("any", "lookalike", "color: #3a3a3a; background: rgba(0, 0, 0, .5); border-color: #c0ffee;"),
    ("any", "config", "password_hash: " + _S6_BCRYPT),
    ("any", "config", "hash = " + _S6_ARGON),
    ("any", "config", '"password": "${DB_PASSWORD}"'),
    ("any", "config", "DB_PASSWORD=changeme"),
    ("any", "config", "token: <your-token>"),
    ("any", "config", "api_key: xxxxxxxxxxxxxxxxxxxx"),
    ("any", "lookalike", "X-Request-Id: " + _S6_UUID2),
    ("any", "lookalike", "ssh-ed25519 " + _S6_PUB + " ops@bastion"),
    ("any", "lookalike", "![chart](data:image/png;base64," + _S6_PNG + ")"),
    ("any", "lookalike", f'<script src="/app.js" integrity="{_S6_SRI}"></script>'),
    ("any", "lookalike", f"Content-Security-Policy: script-src 'self' {_S6_CSP}"),
    ("any", "config", "db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n" + _S6_VAULT),
    ("any", "config", "Authorization: Bearer <token>"),
    ("any", "url", "postgresql://USER:PASSWORD@HOST:5432/DBNAME"),
]

SIXTH: tuple[Case, ...] = tuple(_pos_sixth("s", _SIXTH_POS) + _neg("s", _SIXTH_NEG))

# --- batch 7: seventh (written blind, before reading the guard's source, for issue 24's
# weakest languages and for encoded forms; first measured at 73.8% (144/195), FPR 0.5%
# (1/196): en 90, de 80, fr 75, es 80, it 71, pt 70, nl 80, ru 52, pl 60, tr 76, zh 90,
# ja 71, ko 81 %; prose 81, config 47, chat 75, table 84, obfuscated 0, url 100 %; the
# `ENCODED` group at 29.6% (8/27), FPR 0% (0/22)) -------------------------------------------
#
# Two positives stay missed after tuning, both left on purpose: "Ho impostato come
# passphrase Mare nebel 737?" (an unquoted spaced value with no connector) and "pаrоль:"
# (a Russian word with Latin letters chosen by sound, "p" and "r", not by look).
#
# Per language: inflected and abbreviated labels in prose, tables, config and chat, values on
# the next line, and look-alikes that share the label's letters (パスタ, 비밀, 암호화폐, ключ к
# успеху, şifreli…).  `ENCODED` holds language-free texts where a real-shaped token is
# base64-encoded, percent- or entity-escaped, split by Markdown, written with homoglyphs or
# zero-width characters, and ordinary encoded text that must pass.  Placeholders as in batch
# 6, plus vendor tokens {ghp}, {sklive}, {skproj}, {glpat}, {akia}, {aiza}, {hf}, {npm},
# {xoxb}, and encodings as a tail: |b64 (base64 of the token), |pct (`_`/`-` percent-escaped),
# |ent, |hexent, |lowbar (HTML character references), |mdesc (`\_`), |star (`_` mangled into
# Markdown `*`), |emph (three characters after the prefix in `**`), |tick (same in
# backticks), |homo (Latin letters swapped for Cyrillic look-alikes), |zwj, |wj, |bom (a
# zero-width joiner, word joiner or BOM in the middle).

_PLACEHOLDER7 = re.compile(
    r"\{(ghp|sklive|skproj|glpat|akia|aiza|hf|npm|xoxb|"
    r"pwsp|pwq|tg|discord|slack|sendgrid|aws|azure|ghpat|ant|pgpkey|pemenc|p8enc|"
    r"pw|tok|phrase|uuid|b64pw|basic|jwt|sshkey|alnum|hex|b64|url|up|dig)"
    r"(\d*)(?:\|(zw|fw|spaced|shy|dash|b64|pct|ent|hexent|lowbar|mdesc|star|emph|tick|homo|"
    r"zwj|wj|bom))?\}"
)
_VENDOR7 = {
    "ghp": ("ghp_", ALNUM, 36),
    "sklive": ("sk_live_", ALNUM, 24),
    "skproj": ("sk-proj-", URLSAFE, 64),
    "glpat": ("glpat-", URLSAFE, 20),
    "akia": ("AKIA", UPPER + "234567", 16),
    "aiza": ("AIza", URLSAFE, 35),
    "hf": ("hf_", ALNUM, 34),
    "npm": ("npm_", ALNUM, 36),
}
_HOMO = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445"}
_HOMO.update({"A": "\u0410", "E": "\u0415", "O": "\u041e", "P": "\u0420", "K": "\u041a"})


def _prefix_len(value: str) -> int:
    """Length of a vendor prefix (up to and including its last `_` or `-`), else 0."""
    match = re.match(r"[A-Za-z0-9]+(?:[_-][a-z]+)*[_-]", value)
    return match.end() if match and match.end() <= 12 else 0


def _encode7(value: str, how: str) -> str:
    if how == "b64":
        return base64.b64encode(value.encode()).decode()
    if how in ("pct", "ent", "hexent", "lowbar", "mdesc", "star"):
        table = {
            "pct": {"_": "%5F", "-": "%2D"},
            "ent": {"_": "&#95;", "-": "&#45;"},
            "hexent": {"_": "&#x5F;", "-": "&#x2D;"},
            "lowbar": {"_": "&lowbar;", "-": "&#x2d;"},
            "mdesc": {"_": "\\_", "-": "-"},
            "star": {"_": "*", "-": "-"},
        }[how]
        return "".join(table.get(c, c) for c in value)
    if how in ("emph", "tick"):
        k = _prefix_len(value) or 4
        mark = "**" if how == "emph" else "`"
        return value[:k] + mark + value[k : k + 3] + mark + value[k + 3 :]
    if how == "homo":
        out, swapped = [], 0
        for c in value:
            if swapped < 3 and c in _HOMO:
                out.append(_HOMO[c])
                swapped += 1
            else:
                out.append(c)
        return "".join(out)
    if how in ("zwj", "wj", "bom"):
        mark = {"zwj": "\u200d", "wj": "\u2060", "bom": "\ufeff"}[how]
        mid = len(value) // 2
        return value[:mid] + mark + value[mid:]
    return _obfuscate(value, how)


def _value7(seed: str, i: int, name: str, size: str) -> str:
    if name in _VENDOR7:
        prefix, alphabet, n = _VENDOR7[name]
        return prefix + tok(seed, alphabet, n)
    if name == "xoxb":
        return _value6(seed, i, "slack", size)
    return _value6(seed, i, name, size)


def _pos_seventh(batch: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    """Like `_pos_sixth`, with the vendor tokens and encodings above."""
    cases: list[Case] = []
    for i, (lang, kind, template) in enumerate(rows):
        match = _PLACEHOLDER7.search(template)
        assert match is not None, template
        name, size, how = match.groups()
        value = _value7(f"{batch}-{lang}-{i}", i, name, size)
        if how:
            value = _encode7(value, how)
        text = template[: match.start()] + value + template[match.end() :]
        case = Case(f"{batch}-p{i:03d}-{lang}-{kind}", lang, kind, text, value)
        assert case.line == template[: match.start()].count("\n") + 1, case.id
        cases.append(case)
    return cases


_S7_SHA1 = tok("s7-sha1", HEX, 40)
_S7_SHA256 = tok("s7-sha256", HEX, 64)
_S7_MD5 = tok("s7-md5", HEX, 32)
_S7_UUID = uuid("s7-uuid")
_S7_UUID2 = uuid("s7-uuid2")
_S7_SHORT = tok("s7-short", HEX, 8)
_S7_PNG = "iVBORw0KGgoAAAANSUhEUgAA" + tok("s7-png", B64, 96)
_S7_JPEG = "/9j/4AAQSkZJRgABAQ" + tok("s7-jpeg", B64, 80)
_S7_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("s7-pub", B64, 43)
_S7_RSAPUB = "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + tok("s7-rsapub", B64, 120)
_S7_PGPPUB = "\n".join("mQ" + tok(f"s7-pgppub{k}", B64, 62) for k in range(3))
_S7_DOCID = "1" + tok("s7-docid", URLSAFE, 43)
_S7_VIDEO = tok("s7-video", URLSAFE, 11)
_S7_ORDER = "-".join(tok(f"s7-order{k}", DIGITS, 4) for k in range(3))
_S7_TRACK = "1Z" + tok("s7-track", UPPER + DIGITS, 16)
_S7_TEXT64 = base64.b64encode(
    b"Meeting notes: move the standup to 10am and review the quarterly roadmap."
).decode()
_S7_JSON64 = base64.b64encode(b'{"theme":"dark","lang":"fr","pageSize":50}').decode()
_S7_YAML64 = base64.b64encode(b"log_level: debug\nworkers: 4\nregion: eu-west-1\n").decode()

_SEVENTH_POS: list[tuple[str, str, str]] = [
    # it
    ("it", "prose", "La password del Wi-Fi di casa è {pw}"),
    ("it", "chat", "ti giro la psw: {pw}"),
    ("it", "chat", "eccola, la pass è {pw} 😉"),
    ("it", "prose", "Il codice PIN del bancomat è {dig5}"),
    ("it", "prose", "Codice di accesso al portone: {dig6}"),
    ("it", "prose", "La mia nuova parola chiave per l'accesso è {pw}"),
    ("it", "prose", "Chiave segreta dell'app: {tok}"),
    ("it", "prose", "Le credenziali sono utente mbianchi e password {pw}"),
    ("it", "table", "| Servizio | Utente | Password |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("it", "table", "Servizio\tUtente\tParola d'ordine\nRouter\tadmin\t{pw}"),
    ("it", "config", "chiave_api = {tok}"),
    ("it", "config", "[posta]\nutente = info\nparola_d_ordine = {pw}\n"),
    ("it", "url", "https://admin:{pw}@pannello.esempio.it/login"),
    ("it", "prose", "Il token di accesso personale di GitLab è {glpat}"),
    ("it", "prose", "Frase segreta del portafoglio: {phrase}"),
    ("it", "prose", "la password te la scrivo qui sotto:\n{pw}"),
    ("it", "chat", "pwd del server? è {pw}"),
    ("it", "obfuscated", "pаssword: {pw}"),
    ("it", "prose", "Ho impostato come passphrase {pwsp}"),
    ("it", "prose", "Il segreto del client OAuth è {alnum40}"),
    ("it", "prose", "Codice segreto della carta: {dig4}"),
    # fr
    ("fr", "prose", "Le mot de passe de la messagerie, c'est {pw}"),
    ("fr", "chat", "tiens le mdp : {pw}"),
    ("fr", "chat", "c'est quoi le MDP déjà ? ah si : {pw}"),
    ("fr", "prose", "Mon code PIN est {dig4}"),
    ("fr", "prose", "Digicode de l'immeuble : {dig4}"),
    ("fr", "prose", "Le code d'accès du portail est {dig6}"),
    ("fr", "prose", "La clef secrète de l'application : {tok}"),
    ("fr", "prose", "Identifiant : mdurand — Mot de passe : {pw}"),
    (
        "fr",
        "table",
        "| Service | Identifiant | Mot de passe |\n|---|---|---|\n| Box | admin | {pw} |",
    ),
    ("fr", "table", "Compte;Utilisateur;MDP\nFTP;deploy;{pw}"),
    ("fr", "config", "cle_api = {tok}"),
    ("fr", "config", "motDePasse: {pw}"),
    ("fr", "url", "https://deploy:{pw}@depot.exemple.fr/git/app.git"),
    ("fr", "prose", "Voici mon jeton GitHub : {ghp}"),
    ("fr", "prose", "Phrase secrète du coffre : {phrase}"),
    ("fr", "prose", "Les mots de passe du serveur : root / {pw}"),
    ("fr", "prose", "Le code confidentiel de ma carte bleue est {dig4}"),
    ("fr", "obfuscated", "mot de pаsse : {pw}"),
    ("fr", "prose", "Phrase de passe de la clé SSH : {pwsp}"),
    ("fr", "prose", "Le secret du webhook est {alnum32}"),
    # ja
    ("ja", "prose", "社内Wi-Fiのパスワードは{pw}です"),
    ("ja", "chat", "パスワード教えるね→{pw}"),
    ("ja", "chat", "PW送ります：{pw}"),
    ("ja", "prose", "キャッシュカードの暗証番号は{dig4}です"),
    ("ja", "prose", "オートロックの暗証番号：{dig4}"),
    ("ja", "prose", "アクセスコードは{dig6}です"),
    ("ja", "prose", "秘密鍵：{tok}"),
    ("ja", "prose", "ログインID：tanaka、パスワード：{pw}"),
    ("ja", "table", "| サービス | ID | パスワード |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("ja", "table", "サービス名\tユーザー名\tPW\nルーター\tadmin\t{pw}"),
    ("ja", "config", "パスワード: {pw}"),
    ("ja", "config", "APIキー={tok}"),
    ("ja", "url", "https://admin:{pw}@kanri.example.jp/"),
    ("ja", "prose", "GitHubのアクセストークンは{ghp}です"),
    ("ja", "prose", "合言葉は「{pw}」"),
    ("ja", "prose", "パスワードは下記の通りです。\n{pw}"),
    ("ja", "prose", "パスフレーズ：{phrase}"),
    ("ja", "prose", "新しいパスワードを{pw}に変更しました"),
    ("ja", "prose", "PINコード {dig6}"),
    ("ja", "obfuscated", "ﾊﾟｽﾜｰﾄﾞ：{pw}"),
    ("ja", "prose", "シークレットキーは{alnum40}です"),
    # ko
    ("ko", "prose", "회사 와이파이 비밀번호는 {pw}입니다"),
    ("ko", "chat", "비번 알려줄게 {pw}"),
    ("ko", "chat", "ㅇㅇ 비번은 {pw} 이야"),
    ("ko", "prose", "공동현관 비밀번호 {dig4}"),
    ("ko", "prose", "도어락 비번 {dig6}"),
    ("ko", "prose", "카드 비밀번호는 {dig4}예요"),
    ("ko", "prose", "암호는 {pw}입니다"),
    ("ko", "prose", "아이디: kim / 비밀번호: {pw}"),
    ("ko", "table", "| 서비스 | 아이디 | 비밀번호 |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("ko", "table", "서비스\t계정\t비번\n공유기\tadmin\t{pw}"),
    ("ko", "config", "비밀번호 = {pw}"),
    ("ko", "config", "API 키: {tok}"),
    ("ko", "url", "https://admin:{pw}@gwanri.example.kr/"),
    ("ko", "prose", "깃허브 액세스 토큰은 {ghp} 입니다"),
    ("ko", "prose", "비밀번호를 {pw}(으)로 바꿨어"),
    ("ko", "prose", "패스워드: {pw}"),
    ("ko", "prose", "비밀번호가 {pw}였나?"),
    ("ko", "prose", "시크릿 키 {alnum40}"),
    ("ko", "prose", "인증키: {tok}"),
    ("ko", "prose", "지갑 복구 문구: {phrase}"),
    ("ko", "prose", "비밀번호 아래 적어둘게\n{pw}"),
    # ru
    ("ru", "prose", "Пароль от личного кабинета: {pw}"),
    ("ru", "chat", "скинь пароль? — держи: {pw}"),
    ("ru", "chat", "пасс от вайфая {pw}"),
    ("ru", "prose", "ПИН-код карты {dig4}"),
    ("ru", "prose", "Код от домофона {dig4}"),
    ("ru", "prose", "Код доступа к сейфу: {dig6}"),
    ("ru", "prose", "Секретный ключ приложения: {tok}"),
    ("ru", "prose", "Логин: petrov, пароль: {pw}"),
    ("ru", "table", "| Сервис | Логин | Пароль |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("ru", "table", "Сервис\tПользователь\tПароль\nРоутер\tadmin\t{pw}"),
    ("ru", "config", "пароль_бд = {pw}"),
    ("ru", "config", "ключ_api: {tok}"),
    ("ru", "url", "https://admin:{pw}@panel.example.ru/"),
    ("ru", "prose", "Вот мой токен GitHub: {ghp}"),
    ("ru", "prose", "Сменил пароль на {pw}"),
    ("ru", "prose", "Кодовое слово для банка — {pw}"),
    ("ru", "prose", "Парольная фраза: {phrase}"),
    ("ru", "prose", "С паролем {pw} не заходит"),
    ("ru", "obfuscated", "pаrоль: {pw}"),
    ("ru", "prose", "Токеном {tok} подписываются запросы"),
    ("ru", "prose", "Пароль к архиву — {pwsp}"),
    # tr
    ("tr", "prose", "Ofis Wi-Fi şifresi {pw}"),
    ("tr", "chat", "şifreyi atıyorum: {pw}"),
    ("tr", "chat", "sifre {pw} bu arada"),
    ("tr", "prose", "Kartın PIN kodu {dig4}"),
    ("tr", "prose", "Apartman kapı şifresi: {dig4}"),
    ("tr", "prose", "Erişim kodu: {dig6}"),
    ("tr", "prose", "Uygulamanın gizli anahtarı: {tok}"),
    ("tr", "prose", "Kullanıcı adı: ayse, parola: {pw}"),
    ("tr", "table", "| Servis | Kullanıcı | Şifre |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("tr", "table", "Servis\tKullanıcı\tParola\nModem\tadmin\t{pw}"),
    ("tr", "config", "SIFRE: {pw}"),
    ("tr", "config", "api_anahtari = {tok}"),
    ("tr", "url", "https://admin:{pw}@panel.ornek.com.tr/"),
    ("tr", "prose", "GitHub erişim tokenım: {ghp}"),
    ("tr", "prose", "Şifremi {pw} olarak değiştirdim"),
    ("tr", "prose", "Veritabanının parolası {pw}"),
    ("tr", "prose", "Cüzdan kurtarma ifadesi: {phrase}"),
    ("tr", "prose", "ŞİFRE: {pw}"),
    ("tr", "obfuscated", "şifrе: {pw}"),
    ("tr", "prose", "API anahtarım {alnum40}"),
    ("tr", "prose", "Sunucunun root parolasını {pw} yaptım"),
    # en
    ("en", "chat", "sending you the pw: {pw}"),
    ("en", "prose", "Door access code is {dig6}"),
    ("en", "table", "| Service | User | Password |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("en", "config", "secret_key: {tok}"),
    ("en", "prose", "GitHub token: {ghp}"),
    ("en", "prose", "The recovery passphrase is {phrase}"),
    ("en", "obfuscated", "pаsswоrd: {pw}"),
    ("en", "url", "https://deploy:{pw}@git.example.com/app.git"),
    ("en", "prose", "Our Stripe key is {sklive|mdesc}"),
    ("en", "prose", "PIN: {dig4}"),
    # de
    ("de", "chat", "hier das pw: {pw}"),
    ("de", "prose", "Der Türcode lautet {dig4}"),
    ("de", "table", "| Dienst | Benutzer | Kennwort |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("de", "config", "geheimer_schluessel = {tok}"),
    ("de", "prose", "Mein GitHub-Token: {ghp}"),
    ("de", "prose", "Die Passphrase für den Schlüssel ist {pwsp}"),
    ("de", "prose", "Zugangscode fürs Tor: {dig6}"),
    ("de", "prose", "Passwörter: root / {pw}"),
    ("de", "prose", "Das Kennwort des Admins lautet {pw}"),
    ("de", "obfuscated", "Pаsswort: {pw}"),
    # es
    ("es", "chat", "te paso la contra: {pw}"),
    ("es", "prose", "El código de acceso del portal es {dig6}"),
    ("es", "table", "| Servicio | Usuario | Contraseña |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("es", "config", "clave_secreta = {tok}"),
    ("es", "prose", "Mi token de GitHub: {ghp}"),
    ("es", "prose", "La frase de contraseña es {pwsp}"),
    ("es", "prose", "El PIN de la tarjeta es {dig4}"),
    ("es", "prose", "Contraseñas: root / {pw}"),
    ("es", "url", "https://admin:{pw}@panel.ejemplo.es/"),
    ("es", "obfuscated", "contrаseña: {pw}"),
    # pt
    ("pt", "chat", "te mando a senha: {pw}"),
    ("pt", "prose", "O código de acesso do portão é {dig6}"),
    ("pt", "table", "| Serviço | Usuário | Senha |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("pt", "config", "chave_secreta = {tok}"),
    ("pt", "prose", "Meu token do GitHub: {ghp}"),
    ("pt", "prose", "A frase-senha é {pwsp}"),
    ("pt", "prose", "O PIN do cartão é {dig4}"),
    ("pt", "prose", "Senhas: root / {pw}"),
    ("pt", "prose", "A palavra-passe do router é {pw}"),
    ("pt", "obfuscated", "sеnha: {pw}"),
    # nl
    ("nl", "chat", "hier is het ww: {pw}"),
    ("nl", "prose", "De toegangscode van de poort is {dig6}"),
    ("nl", "table", "| Dienst | Gebruiker | Wachtwoord |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("nl", "config", "geheime_sleutel = {tok}"),
    ("nl", "prose", "Mijn GitHub-token: {ghp}"),
    ("nl", "prose", "De wachtzin is {pwsp}"),
    ("nl", "prose", "De pincode van de pas is {dig4}"),
    ("nl", "prose", "Wachtwoorden: root / {pw}"),
    ("nl", "url", "https://beheer:{pw}@paneel.voorbeeld.nl/"),
    ("nl", "obfuscated", "wachtwооrd: {pw}"),
    # pl
    ("pl", "chat", "podsyłam hasło: {pw}"),
    ("pl", "prose", "Kod do domofonu to {dig4}"),
    ("pl", "table", "| Usługa | Użytkownik | Hasło |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("pl", "config", "klucz_tajny = {tok}"),
    ("pl", "prose", "Mój token GitHuba: {ghp}"),
    ("pl", "prose", "Fraza hasła do klucza to {pwsp}"),
    ("pl", "prose", "Zmieniłam hasła do serwera, teraz root ma hasło {pw}"),
    ("pl", "prose", "Kod dostępu do sejfu: {dig6}"),
    ("pl", "prose", "Z hasłem {pw} nie da się zalogować"),
    ("pl", "obfuscated", "hаsło: {pw}"),
    # zh
    ("zh", "chat", "密码发你了：{pw}"),
    ("zh", "prose", "门禁密码是{dig6}"),
    ("zh", "table", "| 服务 | 用户名 | 密码 |\n|---|---|---|\n| NAS | admin | {pw} |"),
    ("zh", "config", "密钥={tok}"),
    ("zh", "prose", "我的GitHub令牌：{ghp}"),
    ("zh", "prose", "秘钥是{tok}"),
    ("zh", "prose", "银行卡密码{dig6}"),
    ("zh", "prose", "登錄密碼：{pw}"),
    ("zh", "prose", "访问令牌为{tok}"),
    ("zh", "prose", "把密码改成了{pw}"),
]

_SEVENTH_NEG: list[tuple[str, str, str]] = [
    # it
    ("it", "prose", "Ricordati di cambiare la password ogni tre mesi."),
    ("it", "prose", "La password deve contenere almeno 12 caratteri, un numero e un simbolo."),
    ("it", "prose", "La chiave del successo è la costanza."),
    ("it", "prose", "Ho perso le chiavi di casa, le avevo nella borsa."),
    ("it", "prose", "Parola chiave per la ricerca: fatturazione elettronica"),
    ("it", "chat", "mi mandi la password del wifi? grazie"),
    ("it", "prose", "Il codice fiscale va inserito nel modulo, non la password."),
    (
        "it",
        "table",
        "| Servizio | Utente | Password |\n|---|---|---|\n| NAS | admin | (nel vault) |",
    ),
    ("it", "config", "password: ${DB_PASSWORD}"),
    ("it", "lookalike", "Ordine n. " + _S7_ORDER + " spedito, tracking " + _S7_TRACK),
    ("it", "lookalike", "commit " + _S7_SHA1 + " corregge il login"),
    ("it", "prose", "Il prezzo è di 49,90 € IVA inclusa."),
    ("it", "prose", "Chiamami al +39 347 123 4567 per il codice."),
    ("it", "prose", "Via Roma 42, 20121 Milano"),
    ("it", "prose", "Il PIN è stato bloccato dopo tre tentativi: chiama la banca."),
    ("it", "prose", "Il token della metropolitana costa 2 euro."),
    ("it", "lookalike", "versione 3.12.4, build " + _S7_SHORT),
    ("it", "prose", "Password dimenticata? Clicca su «Recupera password»."),
    ("it", "chat", "la pass per la palestra scade a marzo"),
    ("it", "prose", "Usiamo un gestore di password: nessuno le scrive qui."),
    ("it", "lookalike", "ID richiesta " + _S7_UUID),
    # fr
    ("fr", "prose", "Pensez à changer votre mot de passe tous les 90 jours."),
    ("fr", "prose", "Le mot de passe doit comporter au moins 12 caractères."),
    ("fr", "prose", "La clé du succès, c'est la persévérance."),
    ("fr", "prose", "J'ai perdu mes clés en rentrant du marché."),
    ("fr", "prose", "Mot de passe oublié ? Cliquez sur « Réinitialiser »."),
    ("fr", "chat", "tu peux m'envoyer le mdp du wifi stp ?"),
    ("fr", "prose", "Le code postal est 75011, Paris."),
    (
        "fr",
        "table",
        "| Service | Identifiant | Mot de passe |\n|---|---|---|\n| Box | admin | voir coffre |",
    ),
    ("fr", "config", "mot_de_passe: ${MOT_DE_PASSE}"),
    ("fr", "lookalike", "Commande n° " + _S7_ORDER + ", suivi " + _S7_TRACK),
    ("fr", "lookalike", "empreinte SHA-256 : " + _S7_SHA256),
    ("fr", "prose", "Le prix est de 1 299,00 € TTC."),
    ("fr", "prose", "Appelez le 01 42 68 53 00 pour le code promo."),
    ("fr", "prose", "12 rue de la Paix, 75002 Paris"),
    ("fr", "prose", "Le code de la route impose de céder le passage."),
    ("fr", "prose", "Passe-partout est une émission de télé."),
    ("fr", "lookalike", "version 2.4.1 (build " + _S7_SHORT + ")"),
    ("fr", "prose", "Un jeton de casino ne vaut rien hors du casino."),
    ("fr", "chat", "le code promo c'est ÉTÉ2024, -20 % sur tout"),
    ("fr", "prose", "Les clés USB sont dans le tiroir du bas."),
    ("fr", "lookalike", "identifiant de la requête : " + _S7_UUID2),
    # ja
    ("ja", "prose", "パスワードを忘れた場合は管理者に連絡してください。"),
    ("ja", "prose", "パスワードは12文字以上で、記号を含めてください。"),
    ("ja", "prose", "今日のランチはパスタにしました。"),
    ("ja", "prose", "パスポートの有効期限は2031年です。"),
    ("ja", "prose", "コンパスで円を描いた。"),
    ("ja", "prose", "バイパスを通れば10分早く着く。"),
    ("ja", "prose", "キーボードの設定を変更しました。"),
    ("ja", "prose", "成功の鍵は継続です。"),
    ("ja", "chat", "Wi-Fiのパスワード教えてもらえる？"),
    ("ja", "table", "| サービス | ID | パスワード |\n|---|---|---|\n| NAS | admin | 金庫参照 |"),
    ("ja", "config", "パスワード: ${DB_PASSWORD}"),
    ("ja", "lookalike", "注文番号 " + _S7_ORDER + "、追跡番号 " + _S7_TRACK),
    ("ja", "lookalike", "コミット " + _S7_SHA1 + " でログインを修正"),
    ("ja", "prose", "価格は税込3,980円です。"),
    ("ja", "prose", "電話番号は03-1234-5678です。"),
    ("ja", "prose", "〒150-0002 東京都渋谷区渋谷2-21-1"),
    ("ja", "prose", "暗証番号を3回間違えるとロックされます。"),
    ("ja", "prose", "キーワードで検索してください。"),
    ("ja", "lookalike", "バージョン 1.18.2 (ビルド " + _S7_SHORT + ")"),
    ("ja", "prose", "合鍵を作りに行った。"),
    ("ja", "lookalike", "リクエストID " + _S7_UUID),
    # ko
    ("ko", "prose", "비밀번호를 잊으셨다면 관리자에게 문의하세요."),
    ("ko", "prose", "비밀번호는 8자 이상, 특수문자를 포함해야 합니다."),
    ("ko", "prose", "이건 우리 둘만의 비밀이야."),
    ("ko", "prose", "내 키는 178이야."),
    ("ko", "prose", "암호화폐 시세가 또 떨어졌다."),
    ("ko", "prose", "데이터는 AES-256으로 암호화되어 있습니다."),
    ("ko", "prose", "전화번호는 010-1234-5678입니다."),
    ("ko", "prose", "성공의 열쇠는 꾸준함이다."),
    ("ko", "chat", "와이파이 비번 뭐였지?"),
    ("ko", "table", "| 서비스 | 아이디 | 비밀번호 |\n|---|---|---|\n| NAS | admin | 금고 참고 |"),
    ("ko", "config", "비밀번호: ${DB_PASSWORD}"),
    ("ko", "lookalike", "주문번호 " + _S7_ORDER + ", 송장번호 " + _S7_TRACK),
    ("ko", "lookalike", "커밋 " + _S7_SHA1 + " 에서 로그인 수정"),
    ("ko", "prose", "가격은 39,000원입니다."),
    ("ko", "prose", "서울특별시 강남구 테헤란로 152"),
    ("ko", "prose", "키보드가 고장 나서 새로 샀어."),
    ("ko", "prose", "비밀번호 변경 주기는 90일입니다."),
    ("ko", "prose", "번호표 23번 고객님, 창구로 오세요."),
    ("ko", "lookalike", "버전 2.3.1 (빌드 " + _S7_SHORT + ")"),
    ("ko", "prose", "토큰 이코노미에 대한 발표를 들었다."),
    ("ko", "lookalike", "요청 ID " + _S7_UUID2),
    # ru
    ("ru", "prose", "Не забудьте сменить пароль через 90 дней."),
    ("ru", "prose", "Пароль должен содержать не менее 12 символов."),
    ("ru", "prose", "Ключ к успеху — это упорство."),
    ("ru", "prose", "Я потерял ключи от квартиры."),
    ("ru", "prose", "Забыли пароль? Нажмите «Восстановить»."),
    ("ru", "chat", "скинь пароль от вайфая плиз"),
    ("ru", "prose", "Гаечный ключ на 13 лежит в ящике."),
    ("ru", "table", "| Сервис | Логин | Пароль |\n|---|---|---|\n| NAS | admin | в сейфе |"),
    ("ru", "config", "пароль: ${DB_PASSWORD}"),
    ("ru", "lookalike", "Заказ № " + _S7_ORDER + ", трек " + _S7_TRACK),
    ("ru", "lookalike", "коммит " + _S7_SHA1 + " исправляет вход"),
    ("ru", "prose", "Цена — 4 990 ₽."),
    ("ru", "prose", "Звоните: +7 495 123-45-67"),
    ("ru", "prose", "г. Москва, ул. Тверская, д. 7, кв. 12"),
    ("ru", "prose", "ПИН-код заблокирован после трёх попыток."),
    ("ru", "prose", "Это ключевой момент всей истории."),
    ("ru", "lookalike", "версия 4.2.0, сборка " + _S7_SHORT),
    ("ru", "prose", "Паролем служит отпечаток пальца, вводить ничего не нужно."),
    ("ru", "chat", "пароли храним в Bitwarden, сюда не пишем"),
    ("ru", "prose", "Скрипичный ключ нарисован в начале нотного стана."),
    ("ru", "lookalike", "ID запроса " + _S7_UUID),
    # tr
    ("tr", "prose", "Şifrenizi 90 günde bir değiştirmeyi unutmayın."),
    ("tr", "prose", "Şifre en az 12 karakter olmalıdır."),
    ("tr", "prose", "Başarının anahtarı sabırdır."),
    ("tr", "prose", "Evin anahtarlarını kaybettim."),
    ("tr", "prose", "Şifremi unuttum, sıfırlama bağlantısı gelmedi."),
    ("tr", "chat", "wifi şifresini atar mısın?"),
    ("tr", "prose", "Dosya şifreli olduğu için açılmıyor."),
    ("tr", "table", "| Servis | Kullanıcı | Şifre |\n|---|---|---|\n| NAS | admin | kasada |"),
    ("tr", "config", "sifre: ${SIFRE}"),
    ("tr", "lookalike", "Sipariş no " + _S7_ORDER + ", kargo takip " + _S7_TRACK),
    ("tr", "lookalike", "commit " + _S7_SHA1 + " girişi düzeltiyor"),
    ("tr", "prose", "Fiyatı 1.299,90 TL."),
    ("tr", "prose", "Telefon: 0212 555 12 34"),
    ("tr", "prose", "Atatürk Cad. No: 15 Kadıköy / İstanbul"),
    ("tr", "prose", "Anahtar kelime: e-fatura"),
    ("tr", "prose", "Şifre çözme işlemi tamamlandı."),
    ("tr", "lookalike", "sürüm 5.1.3, derleme " + _S7_SHORT),
    ("tr", "prose", "PIN kodunuz üç hatalı denemeden sonra bloke olur."),
    ("tr", "chat", "parolaları 1Password'de tutuyoruz, buraya yazmayın"),
    ("tr", "prose", "Token ekonomisi üzerine bir sunum izledim."),
    ("tr", "lookalike", "istek kimliği " + _S7_UUID2),
    # en
    ("en", "prose", "The key to a good password is length, not complexity."),
    ("en", "prose", "Password policy: 14 characters minimum, no reuse of the last 5."),
    ("en", "chat", "can you send me the wifi password?"),
    ("en", "table", "| Service | User | Password |\n|---|---|---|\n| NAS | admin | in 1Password |"),
    ("en", "lookalike", "commit " + _S7_SHA1 + " fixes the login page"),
    ("en", "prose", "Call 555-0142 to reset your PIN."),
    ("en", "prose", "The token ring network was retired in 1998."),
    ("en", "lookalike", "Order " + _S7_ORDER + " shipped via UPS " + _S7_TRACK),
    ("en", "prose", "Price: $1,299.00 incl. tax"),
    ("en", "prose", "221B Baker Street, London NW1 6XE"),
    # de
    ("de", "prose", "Der Schlüssel zum Erfolg ist Geduld."),
    ("de", "prose", "Passwortrichtlinie: mindestens 12 Zeichen."),
    ("de", "chat", "schickst du mir das WLAN-Passwort?"),
    ("de", "table", "| Dienst | Benutzer | Kennwort |\n|---|---|---|\n| NAS | admin | im Tresor |"),
    ("de", "lookalike", "Commit " + _S7_SHA1 + " behebt den Login"),
    ("de", "prose", "Ruf 030 1234567 an, um die PIN zurückzusetzen."),
    ("de", "prose", "Der Preis beträgt 49,99 €."),
    ("de", "lookalike", "Bestellnummer " + _S7_ORDER),
    ("de", "prose", "Hauptstraße 5, 10115 Berlin"),
    ("de", "prose", "Ich habe meinen Schlüsselbund verloren."),
    # es
    ("es", "prose", "La clave del éxito es la constancia."),
    ("es", "prose", "La contraseña debe tener al menos 12 caracteres."),
    ("es", "chat", "¿me pasas la contraseña del wifi?"),
    (
        "es",
        "table",
        "| Servicio | Usuario | Contraseña |\n|---|---|---|\n| NAS | admin | en el gestor |",
    ),
    ("es", "lookalike", "commit " + _S7_SHA1 + " arregla el inicio de sesión"),
    ("es", "prose", "Llama al 912 345 678 para restablecer el PIN."),
    ("es", "prose", "El precio es de 59,90 €."),
    ("es", "lookalike", "Pedido n.º " + _S7_ORDER),
    ("es", "prose", "Calle Mayor 10, 28013 Madrid"),
    ("es", "prose", "Palabras clave: facturación, impuestos"),
    # pt
    ("pt", "prose", "A chave do sucesso é a persistência."),
    ("pt", "prose", "A senha deve ter pelo menos 12 caracteres."),
    ("pt", "chat", "me passa a senha do wifi?"),
    ("pt", "table", "| Serviço | Usuário | Senha |\n|---|---|---|\n| NAS | admin | no cofre |"),
    ("pt", "lookalike", "commit " + _S7_SHA1 + " corrige o login"),
    ("pt", "prose", "Ligue para (11) 91234-5678 para redefinir o PIN."),
    ("pt", "prose", "O preço é R$ 199,90."),
    ("pt", "lookalike", "Pedido nº " + _S7_ORDER),
    ("pt", "prose", "Rua Augusta 1500, São Paulo - SP"),
    ("pt", "prose", "Senha do banco? Nunca envie por mensagem."),
    # nl
    ("nl", "prose", "De sleutel tot succes is volharding."),
    ("nl", "prose", "Het wachtwoord moet minstens 12 tekens hebben."),
    ("nl", "chat", "kun je me het wifi-wachtwoord sturen?"),
    (
        "nl",
        "table",
        "| Dienst | Gebruiker | Wachtwoord |\n|---|---|---|\n| NAS | admin | in de kluis |",
    ),
    ("nl", "lookalike", "commit " + _S7_SHA1 + " repareert het inloggen"),
    ("nl", "prose", "Bel 020 123 4567 om je pincode te resetten."),
    ("nl", "prose", "De prijs is € 24,95."),
    ("nl", "lookalike", "Bestelnummer " + _S7_ORDER),
    ("nl", "prose", "Damrak 1, 1012 LG Amsterdam"),
    ("nl", "prose", "Ik ben mijn sleutelbos kwijt."),
    # pl
    ("pl", "prose", "Kluczem do sukcesu jest cierpliwość."),
    ("pl", "prose", "Hasło musi mieć co najmniej 12 znaków."),
    ("pl", "chat", "podeślesz mi hasło do wifi?"),
    ("pl", "table", "| Usługa | Użytkownik | Hasło |\n|---|---|---|\n| NAS | admin | w sejfie |"),
    ("pl", "lookalike", "commit " + _S7_SHA1 + " naprawia logowanie"),
    ("pl", "prose", "Zadzwoń pod 22 123 45 67, żeby zresetować PIN."),
    ("pl", "prose", "Cena: 199,99 zł."),
    ("pl", "lookalike", "Zamówienie nr " + _S7_ORDER),
    ("pl", "prose", "ul. Marszałkowska 10, 00-001 Warszawa"),
    ("pl", "prose", "Hasłem przewodnim konferencji jest „Dane dla ludzi”."),
    # zh
    ("zh", "prose", "成功的关键在于坚持。"),
    ("zh", "prose", "密码长度至少12位。"),
    ("zh", "chat", "wifi密码是多少？"),
    ("zh", "table", "| 服务 | 用户名 | 密码 |\n|---|---|---|\n| NAS | admin | 见保险箱 |"),
    ("zh", "lookalike", "提交 " + _S7_SHA1 + " 修复了登录"),
    ("zh", "prose", "客服电话：400-123-4567"),
    ("zh", "prose", "价格：¥1,299.00"),
    ("zh", "lookalike", "订单号 " + _S7_ORDER),
    ("zh", "prose", "密码学是一门古老的学科。"),
    ("zh", "prose", "我把钥匙忘在家里了。"),
]

_ENCODED_POS: list[tuple[str, str, str]] = [
    ("any", "encoded", "apiVersion: v1\nkind: Secret\ndata:\n  GITHUB_TOKEN: {ghp|b64}\n"),
    ("any", "encoded", "echo {sklive|b64} | base64 -d"),
    ("any", "encoded", "the blob in the env file was {glpat|b64}, decode it"),
    ("any", "encoded", "data:\n  npmrc: {npm|b64}\n"),
    ("any", "encoded", "https://api.example.com/v1/sync?token={ghp|pct}&page=2"),
    ("any", "encoded", "curl 'https://hooks.example.com/in?key={skproj|pct}'"),
    ("any", "encoded", "<p>Key: <code>{sklive|ent}</code></p>"),
    ("any", "encoded", "<td>{hf|hexent}</td>"),
    ("any", "encoded", "<pre>{npm|lowbar}</pre>"),
    ("any", "encoded", "<code>{glpat|ent}</code>"),
    ("any", "encoded", "GitHub: {ghp|emph}"),
    ("any", "encoded", "stripe: {sklive|star}"),
    ("any", "encoded", "hf key {hf|mdesc}"),
    ("any", "encoded", "token: {ghp|tick}"),
    ("any", "encoded", "the OpenAI key {skproj|emph}"),
    ("any", "encoded", "{ghp|homo}"),
    ("any", "encoded", "GitLab PAT {glpat|homo}"),
    ("any", "encoded", "AWS key id {akia|homo}"),
    ("any", "encoded", "{ghp|zwj}"),
    ("any", "encoded", "Maps key {aiza|wj}"),
    ("any", "encoded", "npm token {npm|bom}"),
    ("any", "encoded", "{xoxb|zw}"),
    ("any", "encoded", "passwоrd: {pw}"),
    ("any", "encoded", "ΤΟΚΕΝ={tok}"),
    ("any", "encoded", "pa&#115;sword=&quot;{pw}&quot;"),
    ("any", "encoded", "https://example.com/login?user=ops&amp;password={pw}"),
    ("any", "encoded", "password%3D{pw}%26user%3Dops"),
]

_ENCODED_NEG: list[tuple[str, str, str]] = [
    ("any", "encoded", "![logo](data:image/png;base64," + _S7_PNG + ")"),
    ("any", "encoded", '<img src="data:image/jpeg;base64,' + _S7_JPEG + '">'),
    ("any", "encoded", "sha256: " + _S7_SHA256),
    ("any", "encoded", _S7_SHA1 + "  release.tar.gz"),
    ("any", "encoded", "md5 " + _S7_MD5),
    ("any", "encoded", "notes (base64): " + _S7_TEXT64),
    ("any", "encoded", "prefs=" + _S7_JSON64),
    ("any", "encoded", "data:\n  config.yaml: " + _S7_YAML64 + "\n"),
    ("any", "encoded", "https://docs.google.com/document/d/" + _S7_DOCID + "/edit"),
    ("any", "encoded", "https://www.youtube.com/watch?v=" + _S7_VIDEO),
    ("any", "encoded", "https://example.com/search?q=snake%5Fcase%20vs%20camel%2Dcase"),
    ("any", "encoded", "Tom &amp; Jerry &#95; episode&#95;12 &lowbar; final"),
    ("any", "encoded", "This is **really** important, and *so* is `this_one`."),
    ("any", "encoded", "rename my\\_variable\\_name to my\\_var"),
    ("any", "encoded", "Привет! Как дела? Встреча в 10:00."),
    ("any", "encoded", "family: 👨\u200d👩\u200d👧 and 🏳\ufe0f\u200d🌈"),
    ("any", "encoded", "ssh-rsa " + _S7_RSAPUB + " ops@bastion"),
    ("any", "encoded", "ssh-ed25519 " + _S7_PUB + " me@laptop"),
    (
        "any",
        "encoded",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
        + _S7_PGPPUB
        + "\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    ("any", "encoded", "request id " + _S7_UUID + " (trace " + _S7_SHORT + ")"),
    ("any", "encoded", "Ελληνικά: ΤΟ ΚΛΕΙΔΙ ΕΙΝΑΙ ΣΤΟ ΤΡΑΠΕΖΙ"),
    ("any", "encoded", "see https://example.com/a/" + tok("s7-slug", URLSAFE, 22) + "?ref=mail"),
]

SEVENTH: tuple[Case, ...] = tuple(_pos_seventh("s7", _SEVENTH_POS) + _neg("s7", _SEVENTH_NEG))
ENCODED: tuple[Case, ...] = tuple(_pos_seventh("e7", _ENCODED_POS) + _neg("e7", _ENCODED_NEG))


# --- batch 8: eighth (written unseen, without looking at the detectors, after the first
# tuning round; measured once, before the second round tuned on it, at 90.6%
# (260/287), FPR 0% (0/281): en 79, de 79, fr 96, es 92, it 89, pt 85, nl 85, ru 96, pl 93,
# tr 93, zh 93, ja 89, ko 85 %; then tuned on: replies on the line below a question, a
# label heading its line, door and access codes such as "6182D", Wi-Fi keys after a
# qualifier, values joined by "=", keys labelled with an aside) -----------------------------
#
# Judgement calls: obvious placeholders (<password>, ********, ${VAR}, "(see vault)") and
# references to where a secret lives are negatives; a label word in another sense (a motto,
# a queue ticket "senha", musical or keyboard keys, LLM tokens, "şifreleme", 암호화폐,
# 密码学) is a negative; a labelled 64-hex encryption key is a positive though shaped like a
# sha256, an unlabelled or checksum-labelled one a negative; a bare AWS access key id is a
# positive; a door or access code of digits (and a letter) labelled as such is a positive.
# Templates hold one value placeholder ({pw}, {upw}, {tok}, {pin4}…{pin8}, {acode},
# {hex64} and vendor tokens), filled from seeds "e8-…" at import time.

# --- batch 8 value generators -------------------------------------------------------------

_E8_WORD_LIST = (
    "Kolibri Ahorn Brise Marmor Orchidee Kiefer Vanille Granit Citron Corvo Ulivo Olmo "
    "Volna Zvezda Lale Marti Bambu Yuki Kaede Sora Namu Byeol Dalbit Tejo Duna Pinho "
    "Wierzba Sowa Gracht Komeet Fjord Cedro Mirtillo Luciole"
)
_E8_WORDS8 = tuple(_E8_WORD_LIST.split())
_E8_SYM = "!#%&+-.?@="
_E8_USYM = "-._~"


def _e8_digits(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice(DIGITS) for _ in range(rng.randint(lo, hi)))


def _e8_pw8(seed: str, url_safe: bool = False) -> str:
    """A human password in one of several styles (always with at least one digit)."""
    rng = random.Random("pw" + seed)
    w1, w2, w3 = (rng.choice(_E8_WORDS8) for _ in range(3))
    sym = rng.choice(_E8_USYM if url_safe else _E8_SYM)
    d = _e8_digits(rng, 2, 4)
    style = rng.randrange(6)
    if style == 0:
        return f"{w1}{w2}{d}{sym}"
    if style == 1:
        return f"{w1.lower()}{sym}{w2.lower()}{sym}{w3.lower()}{d}"
    if style == 2:
        return f"{w1}{sym}{d}{w2.lower()}"
    if style == 3:
        leet = w1.replace("a", "4").replace("e", "3").replace("o", "0").replace("i", "1")
        return f"{leet}{sym}{w2}{d}"
    if style == 4:
        core = tok("r" + seed, ALNUM + ("" if url_safe else "!#%+="), rng.randint(11, 15))
        return core + rng.choice(DIGITS)
    return f"{w1[:4]}{d}{w2[:4].upper()}{sym}"


def _e8_acode(seed: str) -> str:
    rng = random.Random("ac" + seed)
    if rng.randrange(2):
        return tok("a" + seed, DIGITS, 4) + rng.choice("ABCDK")
    return tok("b" + seed, UPPER + DIGITS, 4) + "-" + tok("c" + seed, UPPER + DIGITS, 4)


def _e8_pin(seed: str, n: int) -> str:
    rng = random.Random("pin" + seed)
    while True:
        v = "".join(rng.choice(DIGITS) for _ in range(n))
        if len(set(v)) >= 3 and v[0] != "0":
            return v


def _e8_value(vk: str, seed: str) -> str:
    s = "e8-" + seed
    if vk == "pw":
        return _e8_pw8(s)
    if vk == "upw":
        return _e8_pw8(s, url_safe=True)
    if vk == "tok":
        return tok(s, ALNUM, 24 + random.Random(s).randrange(16))
    if vk in ("pin4", "pin5", "pin6", "pin8"):
        return _e8_pin(s, int(vk[3:]))
    if vk == "acode":
        return _e8_acode(s)
    if vk == "hex64":
        return tok(s, HEX, 64)
    if vk == "ghp":
        return "ghp_" + tok(s, ALNUM, 36)
    if vk == "xoxb":
        return (
            f"xoxb-{tok(s + '1', DIGITS, 12)}-{tok(s + '2', DIGITS, 13)}-{tok(s + '3', ALNUM, 24)}"
        )
    if vk == "akia":
        return "AKIA" + tok(s, UPPER + "234567", 16)
    if vk == "awss":
        return tok(s, B64, 40)
    if vk == "sklive":
        return "sk_live_" + tok(s, ALNUM, 24 + random.Random(s).randrange(76))
    if vk == "oai":
        return "sk-proj-" + tok(s, URLSAFE, 74) + "T3BlbkFJ" + tok(s + "b", URLSAFE, 74)
    if vk == "ant":
        return "sk-ant-api03-" + tok(s, URLSAFE, 93) + "AA"
    if vk == "glpat":
        return "glpat-" + tok(s, URLSAFE, 20)
    if vk == "hf":
        return "hf_" + tok(s, ALNUM, 34)
    if vk == "aiza":
        return "AIza" + tok(s, URLSAFE, 35)
    if vk == "npm":
        return "npm_" + tok(s, ALNUM, 36)
    if vk == "sg":
        return "SG." + tok(s, URLSAFE, 22) + "." + tok(s + "b", URLSAFE, 43)
    if vk == "jwt":
        return jwt(s)
    if vk == "tg":
        return tok(s, DIGITS, 10) + ":AA" + tok(s + "b", URLSAFE, 33)
    raise ValueError(vk)


_E8_VK = re.compile(
    r"\{(pw|upw|tok|pin4|pin5|pin6|pin8|acode|hex64|ghp|xoxb|akia|awss|sklive|oai|ant|glpat"
    r"|hf|aiza|npm|sg|jwt|tg)\}"
)

_E8_HASH = tok("e8-hash", HEX, 64)
_E8_COMMIT = tok("e8-commit", HEX, 40)
_E8_UUID = uuid("e8-uuid")
_E8_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("e8-pub", B64, 43)
_E8_IMG = "iVBORw0KGgoAAAANSUhEUgAA" + tok("e8-img", B64, 74) + "=="
_E8_NEG_FILL = {
    "{HASH}": _E8_HASH,
    "{COMMIT}": _E8_COMMIT,
    "{UUID}": _E8_UUID,
    "{PUB}": _E8_PUB,
    "{IMG}": _E8_IMG,
}

_e8_counter = {"p": 0, "n": 0}


def _e8_pos(lang: str, rows: list[tuple[str, str]]) -> list[Case]:
    out: list[Case] = []
    for kind, template in rows:
        n = _e8_counter["p"]
        _e8_counter["p"] += 1
        found = _E8_VK.findall(template)
        assert len(found) == 1, template
        vk = found[0]
        value = _e8_value(vk, f"{lang}-{n}-{vk}")
        text = template.replace("{" + vk + "}", value)
        out.append(Case(f"e8-p{n:03d}-{lang}-{kind}", lang, kind, text, value))
    return out


def _e8_neg(lang: str, rows: list[tuple[str, str]]) -> list[Case]:
    out: list[Case] = []
    for kind, template in rows:
        n = _e8_counter["n"]
        _e8_counter["n"] += 1
        text = template
        for k, v in _E8_NEG_FILL.items():
            text = text.replace(k, v)
        assert not _E8_VK.search(text), template
        out.append(Case(f"e8-n{n:03d}-{lang}-{kind}", lang, kind, text))
    return out


# --- Italian ------------------------------------------------------------------------------

_E8_IT = _e8_pos(
    "it",
    [
        ("prose", "La password del router in ufficio è {pw}, non cambiarla senza avvisare."),
        ("chat", "Ciao Marco, ti giro la password della VPN: {pw}"),
        ("prose", "Per entrare nel gestionale usa utente admin e password {pw}."),
        ("list", "- Wi-Fi ospiti: CasaRossi_5G\n- password: {pw}\n- router: al piano terra"),
        (
            "table",
            (
                "| Servizio | Utente | Password |\n|---|---|---|\n| NAS | giulia | {pw} |\n"
                "| Stampante | admin | vedi etichetta |"
            ),
        ),
        ("prose", "La parola d'ordine per entrare nel gruppo riservato è «{pw}»."),
        ("prose", "Il PIN della carta aziendale è {pin5}, tienilo per te."),
        ("note", "Codice di accesso al cancello del magazzino: {acode}"),
        ("config", "chiave API di Stripe (produzione): {sklive}"),
        ("config", "# credenziali di produzione\nOPENAI_API_KEY={oai}"),
        ("config", 'database:\n  host: db.interno\n  utente: app\n  password: "{pw}"'),
        ("config", '{"utente": "ops", "chiave_api": "{tok}"}'),
        ("url", "Il repository si clona con https://deploy:{upw}@git.azienda.it/infra.git"),
        (
            "email",
            (
                "Oggetto: accesso al CRM\n\nBuongiorno Sara,\nle credenziali sono:\n"
                "utente: s.bianchi\npassword: {pw}\n\nCordiali saluti,\nLuca"
            ),
        ),
        ("note", "wifi casa nonna: {pw}"),
        ("prose", "Il token di GitHub per la CI è {ghp}, scade a marzo."),
        ("chat", "mi mandi il token del bot Slack?\n— eccolo: `{xoxb}`"),
        ("prose", "La chiave d'accesso AWS è {akia} (solo lettura)."),
        (
            "prose",
            "Nuova password dell'account amministratore:\n\n{pw}\n\nCambiala al primo accesso.",
        ),
        ("chat", "Ho messo come password {pw} così te la ricordi."),
        ("list", "* PIN del telefono di servizio → {pin4}"),
        ("prose", "La combinazione della cassaforte è {pin6}."),
        ("config", "[smtp]\nserver = smtp.azienda.it\nutente = notifiche\npassword = {pw}"),
        ("prose", "Token di accesso personale GitLab: {glpat}"),
        ("prose", "La chiave segreta per firmare i webhook è {tok}"),
        ("prose", "Le mie credenziali per il portale: codice fiscale come utente, password {pw}"),
        ("prose", "Chiave di cifratura dei backup (non condividere): {hex64}"),
    ],
)

_E8_IT_NEG = _e8_neg(
    "it",
    [
        ("prose", "Ieri ho reimpostato la password della posta, adesso funziona."),
        ("prose", "La password deve contenere almeno 12 caratteri, una maiuscola e un numero."),
        ("prose", "Link per reimpostare la password: https://example.com/reset"),
        ("config", "Nel file .env.example metti password=<la_tua_password> e poi copialo in .env."),
        ("note", "password: ********"),
        ("prose", "La chiave del successo è la costanza."),
        ("prose", "Ho perso la chiave della cantina, ne faccio una copia domani dal ferramenta."),
        ("prose", "Il PIN deve essere di 6 cifre e non può iniziare con zero."),
        ("note", "Numero ordine: 2024-118734, consegna prevista il 14/03/2025."),
        ("chat", "Chiamami al +39 347 812 5590 se il codice non arriva."),
        ("prose", "Il commit {COMMIT} sistema il bug del login."),
        ("note", "Checksum SHA-256 dell'immagine: {HASH}"),
        ("note", "ID richiesta nei log: {UUID}"),
        (
            "prose",
            "La chiave pubblica SSH da aggiungere al server: ssh-ed25519 {PUB} giulia@laptop",
        ),
        (
            "prose",
            "Versione del client: 4.12.3-beta, la password viene chiesta solo al primo avvio.",
        ),
        ("prose", "Prezzo: 49,90 € al mese, il codice sconto arriva via mail."),
        ("prose", "La password è salvata in Bitwarden, cartella «Ufficio», voce «Router»."),
        (
            "config",
            "Nel docker-compose: OPENAI_API_KEY=${OPENAI_API_KEY}, il valore arriva dall'ambiente.",
        ),
        ("prose", "Il brano è in chiave di re minore."),
        ("prose", "Il token scade dopo 30 minuti di inattività."),
        ("prose", "Password dimenticata? Clicca su «Recupera credenziali» sotto il modulo."),
        ("table", "| Campo | Valore |\n|---|---|\n| utente | admin |\n| password | (vedi vault) |"),
        (
            "prose",
            (
                "Il file delle credenziali si trova in /etc/app/credenziali.conf, leggibile solo"
                " da root."
            ),
        ),
        (
            "prose",
            (
                "Alla riunione il direttore ha detto che la parola d'ordine per il 2025 è"
                " «sostenibilità»."
            ),
        ),
        ("note", "Immagine incollata: data:image/png;base64,{IMG}"),
        ("prose", "La chiave API va passata nell'header Authorization, mai nell'URL."),
        ("prose", "Il codice di accesso è di 8 caratteri e va cambiato ogni 90 giorni."),
    ],
)

# --- French -------------------------------------------------------------------------------

_E8_FR = _e8_pos(
    "fr",
    [
        ("prose", "Le mot de passe du Wi-Fi est {pw}"),
        ("note", "mdp du serveur de test : {pw}"),
        ("chat", "Salut, voilà le mdp pour Netflix : {pw} (ne le partage pas stp)"),
        ("note", "Code PIN de la carte SIM : {pin4}"),
        ("prose", "Ma clé d'API OpenAI : {oai}"),
        ("prose", "Le jeton d'accès GitHub est {ghp}."),
        ("note", "Code secret du coffre : {pin6}"),
        ("note", "Digicode de l'immeuble : {acode}"),
        (
            "table",
            "| Compte | Identifiant | Mot de passe |\n|---|---|---|\n| Banque | jdupont | {pw} |",
        ),
        ("config", "smtp:\n  utilisateur: notifications\n  mot_de_passe: {pw}"),
        ("config", "# clé Stripe de prod\nSTRIPE_SECRET_KEY={sklive}"),
        ("url", "Connexion à la base : postgres://admin:{upw}@bdd.interne:5432/compta"),
        (
            "email",
            (
                "Objet : vos identifiants\n\nBonjour Mme Martin,\n\n"
                "Voici vos identifiants provisoires :\nIdentifiant : cmartin\n"
                "Mot de passe : {pw}\n\nMerci de le modifier dès la première connexion.\n\n"
                "Cordialement,\nLe service informatique"
            ),
        ),
        ("prose", "Nouveau mot de passe du compte admin :\n{pw}"),
        ("chat", "J'ai changé le mot de passe de la box, c'est maintenant {pw}."),
        ("chat", "Le jeton du bot Slack : `{xoxb}`"),
        ("note", "Clé secrète AWS (compte facturation) : {awss}"),
        ("note", "Identifiant de clé d'accès AWS : {akia}"),
        ("config", '{"utilisateur": "api", "jeton": "{tok}"}'),
        ("list", "- box internet : Livebox-7A2C\n- clé WPA : {pw}"),
        ("chat", "Le code PIN de mon téléphone pro, au cas où : {pin8}"),
        ("prose", "Mot de passe : « {pw} »"),
        ("prose", "Jeton Hugging Face pour télécharger les modèles : {hf}"),
        ("chat", "Le mot de passe, c'est {pw} — note-le quelque part."),
        ("chat", "Pour le VPN, login jmartin et mdp {pw}."),
        ("prose", "Clé de chiffrement des sauvegardes (à garder secrète) : {hex64}"),
        ("prose", "Jeton d'accès personnel GitLab : {glpat}"),
    ],
)

_E8_FR_NEG = _e8_neg(
    "fr",
    [
        ("prose", "J'ai réinitialisé mon mot de passe hier soir, tout marche."),
        (
            "prose",
            "Le mot de passe doit faire au moins 12 caractères avec un chiffre et un symbole.",
        ),
        ("prose", "Lien de réinitialisation du mot de passe : https://example.com/reset"),
        ("note", "mot de passe : <votre mot de passe>"),
        ("note", "mdp : ******** (masqué dans l'export)"),
        ("prose", "La clé du succès, c'est la régularité."),
        ("prose", "J'ai oublié la clé de la cave chez Paul."),
        ("note", "Clé USB de 64 Go rangée dans le tiroir du bureau."),
        ("prose", "Le code PIN comporte 4 chiffres ; au bout de 3 erreurs la carte est bloquée."),
        ("note", "Commande n° 2024-55812 livrée le 12/03/2025."),
        ("prose", "Appelez le support au 01 42 68 53 00 pour débloquer votre compte."),
        ("note", "Empreinte SHA-256 de l'archive : {HASH}"),
        ("prose", "Le commit {COMMIT} corrige la page de connexion."),
        ("note", "Clé publique SSH : ssh-ed25519 {PUB} claire@portable"),
        ("prose", "Version 3.8.1 : le jeton expire désormais au bout de 15 minutes."),
        ("prose", "Le mot de passe est dans le coffre KeePass de l'équipe, entrée « Routeur »."),
        (
            "config",
            "Dans le .env, mettez DB_PASSWORD=${DB_PASSWORD} et laissez la CI injecter la valeur.",
        ),
        ("note", "Identifiant de requête : {UUID}"),
        ("prose", "Prix : 129,00 € TTC, code promo valable jusqu'au 31 mars."),
        ("chat", "Il me reste deux jetons pour le lave-linge."),
        ("prose", "Mot de passe oublié ? Cliquez sur « Mot de passe oublié » sous le formulaire."),
        (
            "table",
            (
                "| Champ | Valeur |\n|---|---|\n| identifiant | admin |\n"
                "| mot de passe | voir le gestionnaire |"
            ),
        ),
        ("prose", "Le morceau passe de la clé de sol à la clé de fa à la mesure 40."),
        ("prose", "Le fichier de configuration est dans ~/.config/app/identifiants.toml."),
        ("note", "Image collée : data:image/png;base64,{IMG}"),
        ("prose", "Ne mettez jamais la clé d'API dans l'URL, utilisez l'en-tête Authorization."),
        (
            "prose",
            (
                "Pensez à activer la double authentification : le code arrive par SMS au 06 12"
                " 34 56 78."
            ),
        ),
    ],
)


# --- Japanese -----------------------------------------------------------------------------

_E8_JA = _e8_pos(
    "ja",
    [
        ("prose", "Wi-Fiのパスワードは {pw} です。"),
        ("note", "管理画面のパスワード：{pw}"),
        ("prose", "キャッシュカードの暗証番号は{pin4}。"),
        ("chat", "部室の合言葉は「{pw}」だよ、外の人には言わないでね"),
        ("note", "GitHubのトークン：{ghp}"),
        ("prose", "OpenAIのAPIキーは `{oai}` です"),
        ("note", "Slack botトークン → {xoxb}"),
        ("url", "本番DBの接続文字列: mysql://app:{upw}@db.internal:3306/shop"),
        (
            "table",
            "| サービス | ユーザー名 | パスワード |\n|---|---|---|\n| 経費精算 | tanaka | {pw} |",
        ),
        ("config", "smtp:\n  user: notice\n  password: {pw}  # 本番用"),
        ("config", "# 決済（本番）\nSTRIPE_SECRET_KEY={sklive}"),
        (
            "email",
            (
                "件名：VPNアカウント発行のお知らせ\n\n山田様\n\nVPNのアカウントを発行しました。\nユーザーID：yamada01\n初期パスワード：{pw}\n"
                "\n初回ログイン後に変更してください。\n\n情報システム部"
            ),
        ),
        ("chat", "ごめん、さっきのパスワード間違ってた。正しくは {pw} です"),
        ("prose", "新しいパスワード\n{pw}"),
        ("note", "AWSのアクセスキーID：{akia}"),
        ("prose", "シークレットアクセスキーは {awss} です。"),
        ("chat", "スマホのPINは{pin6}にした"),
        ("prose", "事務所のドアの暗証番号は{pin8}です。"),
        ("list", "・ルーター管理画面：本体裏のラベル参照\n・ログインパスワード：{pw}"),
        ("config", '{"ユーザー": "batch", "トークン": "{tok}"}'),
        ("prose", "Hugging Faceのアクセストークン {hf} を使ってモデルを落とす"),
        ("prose", "入館用のアクセスコードは {acode} です。"),
        ("prose", "秘密鍵のパスフレーズは{pw}"),
        ("chat", "パスは{pw}ね"),
        ("note", "GitLabの個人アクセストークン：{glpat}"),
        ("note", "Webhook署名用のシークレット：{tok}"),
        ("prose", "ログイン情報はID: suzuki、パスワード: {pw} です。"),
    ],
)

_E8_JA_NEG = _e8_neg(
    "ja",
    [
        ("prose", "昨日パスワードをリセットしたので、もう一度ログインしてください。"),
        ("prose", "パスワードは12文字以上で、英大文字・数字・記号を含める必要があります。"),
        ("note", "パスワード再設定用リンク：https://example.com/reset"),
        ("note", "パスワード：********"),
        ("prose", "パスワード欄には<パスワード>の代わりに自分のものを入れてください。"),
        ("prose", "成功の鍵は毎日の継続です。"),
        ("chat", "家の鍵を会社に忘れてきた。"),
        ("prose", "暗証番号は4桁の数字で、3回間違えるとロックされます。"),
        ("note", "注文番号：2024-0315-8812、配送予定日は3月18日です。"),
        ("note", "お問い合わせは 03-5412-7788 まで。"),
        ("note", "SHA-256チェックサム：{HASH}"),
        ("prose", "コミット {COMMIT} でログイン画面のバグを修正。"),
        ("note", "公開鍵：ssh-ed25519 {PUB} sato@mac"),
        ("prose", "バージョン 2.4.0 からトークンの有効期限が30分になりました。"),
        ("prose", "パスワードは1Passwordの「チーム共有」保管庫にあります。"),
        ("prose", "環境変数 OPENAI_API_KEY は .env から読み込む（値はここには書かない）。"),
        ("note", "リクエストID：{UUID}"),
        ("note", "価格：1,980円（税込）"),
        ("prose", "キーボードのキー配列をUSに変更した。"),
        ("prose", "この曲のキーはハ長調です。"),
        ("prose", "「笑顔で挨拶」を合言葉に、新年度がスタートしました。"),
        (
            "table",
            "| 項目 | 値 |\n|---|---|\n| ユーザー名 | admin |\n| パスワード | （保管庫を参照） |",
        ),
        ("prose", "設定ファイルは ~/.config/app/credentials.toml にある。"),
        ("note", "画像：data:image/png;base64,{IMG}"),
        ("prose", "APIキーはURLに含めず、Authorizationヘッダーで送ること。"),
        ("prose", "コンテキストの上限は 128,000 トークンです。"),
        ("prose", "暗証番号を忘れた場合は窓口で再設定の手続きをしてください。"),
    ],
)

# --- Korean -------------------------------------------------------------------------------

_E8_KO = _e8_pos(
    "ko",
    [
        ("prose", "와이파이 비밀번호는 {pw}입니다."),
        ("note", "회사 메일 비번: {pw}"),
        ("chat", "공유기 관리자 암호는 {pw} 이에요"),
        ("note", "패스워드 → {pw}"),
        ("prose", "카드 비밀번호 4자리는 {pin4}"),
        ("note", "현관 도어락 번호: {pin6}"),
        ("chat", "OTP 기기 PIN은 {pin8}로 바꿨어"),
        ("prose", "GitHub 토큰은 {ghp} 입니다."),
        ("note", "OpenAI API 키: `{oai}`"),
        ("chat", "슬랙 봇 토큰 {xoxb} 여기 있어요"),
        ("url", "DB 접속 주소: postgresql://svc:{upw}@10.0.3.7:5432/main"),
        ("table", "| 서비스 | 아이디 | 비밀번호 |\n|---|---|---|\n| 사내 위키 | kim.j | {pw} |"),
        ("config", 'redis:\n  host: cache.internal\n  password: "{pw}"  # 운영'),
        ("config", "# 결제 운영 키\nSTRIPE_SECRET_KEY={sklive}"),
        (
            "email",
            (
                "제목: 서버 계정 전달\n\n박 팀장님,\n요청하신 서버 계정입니다.\n"
                "아이디: deploy\n비밀번호: {pw}\n\n확인 부탁드립니다."
            ),
        ),
        ("chat", "아 비번 바꿨어 ㅋㅋ 이제 {pw} 야"),
        ("prose", "새 비밀번호\n{pw}"),
        ("note", "AWS 액세스 키 ID: {akia}"),
        ("prose", "AWS 시크릿 키는 {awss} 입니다"),
        ("config", '{"아이디": "bot", "인증키": "{tok}"}'),
        ("note", "공공데이터포털 인증키(Decoding): {tok}"),
        ("chat", "허깅페이스 토큰 {hf} 로 로그인하면 됨"),
        ("prose", "출입 코드는 {acode}입니다"),
        ("note", "GitLab 개인 액세스 토큰: {glpat}"),
        ("list", "- 인터넷 뱅킹 공동인증서 암호: {pw}"),
        ("prose", "노트북 로그인 패스워드는 {pw}로 설정해 뒀어요."),
        ("prose", "백업 암호화 키(유출 금지): {hex64}"),
    ],
)

_E8_KO_NEG = _e8_neg(
    "ko",
    [
        ("prose", "어제 비밀번호를 재설정했어요."),
        ("prose", "비밀번호는 12자 이상, 특수문자를 포함해야 합니다."),
        ("note", "비밀번호 재설정 링크: https://example.com/reset"),
        ("note", "비밀번호: ********"),
        ("prose", "비번 칸에는 <비밀번호> 대신 본인 비밀번호를 넣으세요."),
        ("prose", "성공의 열쇠는 꾸준함이다."),
        ("chat", "집 열쇠를 사무실에 두고 왔어."),
        ("prose", "PIN은 6자리 숫자로 설정해야 합니다."),
        ("note", "주문번호: 20240315-88123, 배송 예정일 3월 18일"),
        ("note", "문의: 02-3456-7890"),
        ("note", "SHA-256 체크섬: {HASH}"),
        ("prose", "커밋 {COMMIT}에서 로그인 버그 수정"),
        ("note", "공개키: ssh-ed25519 {PUB} lee@desktop"),
        ("prose", "버전 1.9.2부터 토큰 만료 시간이 1시간으로 늘었습니다."),
        ("prose", "비밀번호는 팀 Bitwarden 금고에 저장해 두었습니다."),
        ("prose", "API 키는 환경변수 API_KEY에서 읽어옵니다 (값은 여기 안 적음)."),
        ("note", "요청 ID: {UUID}"),
        ("note", "가격: 29,000원"),
        ("chat", "암호화폐 시세가 또 떨어졌다. 디스크 암호화는 BitLocker로 하자."),
        ("prose", "이 곡의 키는 G장조야."),
        ("table", "| 항목 | 값 |\n|---|---|\n| 아이디 | admin |\n| 비밀번호 | 금고 참조 |"),
        ("note", "설정 파일 경로: ~/.config/app/credentials.toml"),
        ("note", "이미지: data:image/png;base64,{IMG}"),
        ("prose", "API 키는 URL이 아니라 Authorization 헤더로 보내세요."),
        ("prose", "토큰 수 제한은 8,192개입니다."),
        ("prose", "단축키는 Ctrl+Shift+K 입니다."),
        ("prose", "비밀번호를 5회 이상 틀리면 계정이 잠깁니다."),
    ],
)


# --- Russian ------------------------------------------------------------------------------

_E8_RU = _e8_pos(
    "ru",
    [
        ("note", "Пароль от Wi-Fi: {pw}"),
        ("prose", "Пароль от почты — {pw}"),
        ("prose", "Зайди под логином admin с паролем {pw}."),
        ("chat", "Вот новый пароль для VPN: {pw}"),
        ("note", "ПИН-код карты: {pin4}"),
        ("note", "Код доступа в подъезд {acode}"),
        ("note", "Токен GitHub: {ghp}"),
        ("prose", "API-ключ OpenAI: `{oai}`"),
        ("prose", "Токен бота Slack — {xoxb}"),
        ("url", "Строка подключения: postgresql://app:{upw}@db.local:5432/crm"),
        ("table", "| Сервис | Логин | Пароль |\n|---|---|---|\n| Бухгалтерия | ivanova | {pw} |"),
        ("config", "smtp:\n  user: robot\n  password: {pw}  # боевой"),
        ("config", "# ключ Stripe (прод)\nSTRIPE_SECRET_KEY={sklive}"),
        (
            "email",
            (
                "Тема: доступ к серверу\n\nДобрый день, Сергей!\n\nВаш логин: s.petrov\n"
                "Временный пароль: {pw}\n\nПросьба сменить его при первом входе.\n\n"
                "С уважением,\nИТ-отдел"
            ),
        ),
        ("chat", "скинь пароль от роутера плз\n— {pw}"),
        ("prose", "Новый пароль администратора:\n{pw}"),
        ("note", "Идентификатор ключа доступа AWS: {akia}"),
        ("note", "Секретный ключ AWS: {awss}"),
        ("config", '{"логин": "svc", "токен": "{tok}"}'),
        ("chat", "Поменял пароль на {pw}, не забудь."),
        ("prose", "Паролем к архиву служит {pw}."),
        ("prose", "Токен Hugging Face для скачивания моделей: {hf}"),
        ("chat", "ПИН от телефона {pin6}"),
        ("note", "Персональный токен доступа GitLab: {glpat}"),
        ("list", "- Wi-Fi: Dacha_5G\n- пароль: {pw}"),
        ("note", "Ключ шифрования бэкапов: {hex64}"),
        ("chat", "В пароле {pw} есть спецсимволы, бери его в кавычки."),
        ("prose", "Отправь пароль Ольге, он такой: {pw}"),
    ],
)

_E8_RU_NEG = _e8_neg(
    "ru",
    [
        ("prose", "Вчера сбросил пароль от почты, теперь всё работает."),
        ("prose", "Пароль должен быть не короче 12 символов и содержать цифру."),
        ("note", "Ссылка для сброса пароля: https://example.com/reset"),
        ("note", "пароль: ********"),
        ("prose", "Вместо <пароль> подставьте свой пароль."),
        ("prose", "Ключ к успеху — регулярность."),
        ("chat", "Забыл ключи от дачи у соседей."),
        ("prose", "ПИН-код состоит из 4 цифр, после трёх ошибок карта блокируется."),
        ("note", "Номер заказа: 2024-77812, доставка 18.03.2025."),
        ("note", "Телефон поддержки: +7 495 123-45-67"),
        ("note", "Контрольная сумма SHA-256: {HASH}"),
        ("prose", "Коммит {COMMIT} исправляет форму входа."),
        ("note", "Открытый ключ: ssh-ed25519 {PUB} oleg@laptop"),
        ("prose", "В версии 5.2.0 токен живёт 15 минут."),
        ("prose", "Пароль лежит в KeePass, запись «Роутер»."),
        ("prose", "Ключ API берётся из переменной окружения OPENAI_API_KEY, в заметке его нет."),
        ("note", "ID запроса: {UUID}"),
        ("note", "Цена: 1 990 ₽"),
        ("prose", "Скрипичный ключ и басовый ключ — основы нотной грамоты."),
        ("prose", "У самой дороги бьёт ключом родник."),
        ("table", "| Поле | Значение |\n|---|---|\n| логин | admin |\n| пароль | см. сейф |"),
        ("prose", "Конфиг лежит в /etc/app/credentials.conf."),
        ("note", "Картинка: data:image/png;base64,{IMG}"),
        ("prose", "Не передавайте ключ API в URL — только в заголовке Authorization."),
        ("prose", "Лимит контекста — 128 000 токенов."),
        ("chat", "Гаечный ключ на 13 лежит в ящике с инструментами."),
        ("prose", "С паролем беда: после трёх неудачных попыток учётка блокируется на час."),
    ],
)

# --- Turkish ------------------------------------------------------------------------------

_E8_TR = _e8_pos(
    "tr",
    [
        ("note", "Wi-Fi şifresi: {pw}"),
        ("prose", "Ofis modeminin şifresi {pw}"),
        ("chat", "Yeni şifreyi {pw} olarak belirledim."),
        ("note", "Mail parolası: {pw}"),
        ("prose", "Kartın PIN kodu {pin4}"),
        ("note", "Kapı giriş kodu: {acode}"),
        ("note", "GitHub token'ı: {ghp}"),
        ("prose", "OpenAI API anahtarı: `{oai}`"),
        ("chat", "Slack bot token'ı {xoxb}"),
        ("url", "Veritabanı bağlantısı: mysql://app:{upw}@db.local:3306/stok"),
        ("table", "| Hizmet | Kullanıcı | Şifre |\n|---|---|---|\n| Muhasebe | ayse.k | {pw} |"),
        ("config", "smtp:\n  kullanici: bildirim\n  parola: {pw}"),
        ("config", "# canlı ödeme anahtarı\nSTRIPE_SECRET_KEY={sklive}"),
        (
            "email",
            (
                "Konu: sunucu erişimi\n\nMerhaba Mehmet Bey,\n\nKullanıcı adınız: mehmet.y\n"
                "Geçici şifreniz: {pw}\n\nİlk girişte değiştirmenizi rica ederiz.\n\n"
                "Saygılarımızla,\nBT Ekibi"
            ),
        ),
        ("chat", "şifreyi unuttum ya, neydi?\n— {pw}"),
        ("prose", "Yönetici hesabının yeni parolası:\n{pw}"),
        ("note", "AWS erişim anahtarı kimliği: {akia}"),
        ("note", "AWS gizli anahtarı: {awss}"),
        ("config", '{"kullanici": "servis", "anahtar": "{tok}"}'),
        ("chat", "Şifremiz {pw}, kimseye söyleme."),
        ("chat", "Hugging Face token'ım {hf}"),
        ("chat", "Telefonun PIN'i {pin6}"),
        ("note", "GitLab kişisel erişim token'ı: {glpat}"),
        ("list", "- Ev interneti: TurkNet_5G\n- şifresi: {pw}"),
        ("note", "Yedek şifreleme anahtarı: {hex64}"),
        ("prose", "Banka uygulamasının parolası {pw} idi, değiştirdim mi hatırlamıyorum."),
        ("prose", "Giriş bilgileri: kullanıcı adı admin, parola {pw}"),
        ("prose", "Kasanın şifresini {pin8} yaptım."),
    ],
)

_E8_TR_NEG = _e8_neg(
    "tr",
    [
        ("prose", "Dün e-posta şifremi sıfırladım."),
        ("prose", "Şifre en az 12 karakter olmalı ve bir rakam içermeli."),
        ("note", "Şifre sıfırlama bağlantısı: https://example.com/reset"),
        ("note", "şifre: ********"),
        ("prose", "<şifreniz> yazan yere kendi şifrenizi girin."),
        ("prose", "Başarının anahtarı düzenli çalışmaktır."),
        ("chat", "Evin anahtarını ofiste unuttum."),
        ("prose", "PIN kodu 6 haneli olmalıdır."),
        ("note", "Sipariş numarası: 2024-55190, teslimat 18.03.2025"),
        ("note", "Müşteri hizmetleri: 0850 222 33 44"),
        ("note", "SHA-256 özeti: {HASH}"),
        ("prose", "{COMMIT} numaralı commit giriş sayfasını düzeltiyor."),
        ("note", "Açık anahtar: ssh-ed25519 {PUB} emre@laptop"),
        ("prose", "3.1.0 sürümünden itibaren token 30 dakikada sona eriyor."),
        ("prose", "Şifre ekibin Bitwarden kasasında, «Modem» kaydında."),
        ("prose", "API anahtarı OPENAI_API_KEY ortam değişkeninden okunuyor, buraya yazılmadı."),
        ("note", "İstek kimliği: {UUID}"),
        ("note", "Fiyat: 1.299,00 TL"),
        ("prose", "Şifreleme için AES-256 kullanıyoruz."),
        ("chat", "Dosya şifreli olduğu için açılamadı."),
        ("table", "| Alan | Değer |\n|---|---|\n| kullanıcı | admin |\n| şifre | kasaya bakın |"),
        ("note", "Yapılandırma dosyası: /etc/app/credentials.conf"),
        ("note", "Görsel: data:image/png;base64,{IMG}"),
        ("prose", "API anahtarını URL'de değil Authorization başlığında gönderin."),
        ("prose", "Bağlam sınırı 128.000 token."),
        ("note", "Anahtar kelimeler: güvenlik, yedekleme, erişim."),
        ("prose", "Şifresini üç kez yanlış giren kullanıcının hesabı kilitlenir."),
    ],
)


# --- German -------------------------------------------------------------------------------

_E8_DE = _e8_pos(
    "de",
    [
        ("prose", "Das WLAN-Passwort lautet {pw}."),
        ("note", "Kennwort für den Drucker-Admin: {pw}"),
        ("note", "PIN der Firmenkreditkarte: {pin4}"),
        ("note", "GitHub-Token: {ghp}"),
        ("prose", "API-Schlüssel von OpenAI: `{oai}`"),
        ("url", "Verbindung: postgres://buchhaltung:{upw}@db.intern:5432/fibu"),
        (
            "table",
            "| Dienst | Benutzer | Passwort |\n|---|---|---|\n| Zeiterfassung | mmueller | {pw} |",
        ),
        ("config", "mail:\n  benutzer: noreply\n  passwort: {pw}"),
        (
            "email",
            (
                "Betreff: Zugangsdaten\n\nHallo Frau Schmidt,\n\nhier Ihre Zugangsdaten:\n"
                "Benutzername: aschmidt\nInitialpasswort: {pw}\n\nViele Grüße\nIT-Support"
            ),
        ),
        ("chat", "hast du das neue Passwort?\n— ja: {pw}"),
        ("note", "Zugangscode für das Hoftor: {acode}"),
        ("note", "Slack-Bot-Token: {xoxb}"),
        ("prose", "Mit dem Passwort {pw} kommst du in den Router."),
        ("note", "Geheimer Zugriffsschlüssel (AWS): {awss}"),
    ],
)

_E8_DE_NEG = _e8_neg(
    "de",
    [
        ("prose", "Ich habe gestern mein Passwort zurückgesetzt."),
        ("prose", "Das Passwort muss mindestens 12 Zeichen lang sein."),
        ("note", "Link zum Zurücksetzen des Passworts: https://example.com/reset"),
        ("note", "Passwort: ********"),
        ("prose", "Der Schlüssel zum Erfolg ist Geduld."),
        ("prose", "Den Kellerschlüssel hat Frau Weber."),
        ("prose", "Die PIN hat 6 Stellen."),
        ("note", "Bestellnummer: 2024-771203, Lieferung am 18.03.2025"),
        ("note", "SHA-256-Prüfsumme: {HASH}"),
        ("note", "Öffentlicher Schlüssel: ssh-ed25519 {PUB} jan@notebook"),
        ("prose", "Das Passwort steht im Team-KeePass unter „Router“."),
        ("prose", "Ab Version 2.3.1 läuft das Token nach 15 Minuten ab."),
        ("note", "Hotline: +49 30 1234 5678"),
    ],
)

# --- Spanish ------------------------------------------------------------------------------

_E8_ES = _e8_pos(
    "es",
    [
        ("prose", "La contraseña del wifi es {pw}"),
        ("note", "Clave del correo: {pw}"),
        ("note", "PIN de la tarjeta: {pin4}"),
        ("note", "Token de GitHub: {ghp}"),
        ("prose", "Clave de API de OpenAI: `{oai}`"),
        ("url", "Conexión: mysql://ventas:{upw}@bd.interna:3306/tienda"),
        (
            "table",
            "| Servicio | Usuario | Contraseña |\n|---|---|---|\n| Nóminas | lgarcia | {pw} |",
        ),
        ("config", "correo:\n  usuario: avisos\n  contraseña: {pw}"),
        (
            "email",
            (
                "Asunto: acceso al servidor\n\nHola Pablo:\n\n"
                "Tu usuario es pablo.r y la contraseña provisional es {pw}\n\n"
                "Cámbiala al entrar.\n\nUn saludo"
            ),
        ),
        ("chat", "¿me pasas la contra del router?\n— toma: {pw}"),
        ("note", "Código de acceso del portal: {acode}"),
        ("note", "Token del bot de Slack: {xoxb}"),
        ("note", "Clave secreta de AWS: {awss}"),
    ],
)

_E8_ES_NEG = _e8_neg(
    "es",
    [
        ("prose", "Ayer restablecí la contraseña del correo."),
        ("prose", "La contraseña debe tener al menos 12 caracteres."),
        ("note", "Enlace para restablecer la contraseña: https://example.com/reset"),
        ("note", "contraseña: ********"),
        ("prose", "La clave del éxito es la constancia."),
        ("chat", "Dejé las llaves de casa en la oficina."),
        ("prose", "El PIN tiene 4 dígitos."),
        ("note", "Número de pedido: 2024-33817, entrega el 18/03/2025"),
        ("note", "Suma SHA-256: {HASH}"),
        ("note", "Clave pública: ssh-ed25519 {PUB} ana@portatil"),
        ("prose", "La contraseña está en el gestor Bitwarden del equipo."),
        ("prose", "En clave de humor, la reunión fue un desastre."),
        ("note", "Precio: 49,99 €"),
    ],
)

# --- Portuguese ---------------------------------------------------------------------------

_E8_PT = _e8_pos(
    "pt",
    [
        ("prose", "A senha do wi-fi é {pw}"),
        ("note", "Palavra-passe do email: {pw}"),
        ("note", "PIN do cartão: {pin4}"),
        ("note", "Token do GitHub: {ghp}"),
        ("prose", "Chave de API da OpenAI: `{oai}`"),
        ("url", "Conexão: postgres://financeiro:{upw}@bd.interno:5432/contas"),
        ("table", "| Serviço | Usuário | Senha |\n|---|---|---|\n| ERP | jsilva | {pw} |"),
        ("config", "email:\n  usuario: avisos\n  senha: {pw}"),
        (
            "email",
            (
                "Assunto: acesso ao sistema\n\nOlá Ana,\n\nSeu usuário: ana.souza\n"
                "Senha provisória: {pw}\n\nTroque no primeiro acesso.\n\nAbraços,\nTI"
            ),
        ),
        ("chat", "qual a senha do roteador?\n— é {pw}"),
        ("note", "Código de acesso do prédio: {acode}"),
        ("note", "Token do bot do Slack: {xoxb}"),
        ("note", "Chave secreta da AWS: {awss}"),
    ],
)

_E8_PT_NEG = _e8_neg(
    "pt",
    [
        ("prose", "Ontem redefini a senha do banco."),
        ("prose", "A senha deve ter no mínimo 12 caracteres."),
        ("note", "Link para redefinir a senha: https://example.com/reset"),
        ("note", "senha: ********"),
        ("prose", "A chave do sucesso é a persistência."),
        ("chat", "Esqueci a chave de casa no escritório."),
        ("prose", "O PIN tem 6 dígitos."),
        ("note", "Número do pedido: 2024-99120, entrega em 18/03/2025"),
        ("note", "Hash SHA-256: {HASH}"),
        ("note", "Chave pública: ssh-ed25519 {PUB} rui@portatil"),
        ("prose", "A senha está no cofre do Bitwarden da equipa."),
        ("chat", "Peguei a senha 47 na fila do banco, vai demorar."),
        ("note", "Telefone: (11) 98765-4321"),
    ],
)

# --- Dutch --------------------------------------------------------------------------------

_E8_NL = _e8_pos(
    "nl",
    [
        ("prose", "Het wifi-wachtwoord is {pw}"),
        ("note", "Wachtwoord van de NAS: {pw}"),
        ("note", "Pincode van de bankpas: {pin4}"),
        ("note", "GitHub-token: {ghp}"),
        ("prose", "API-sleutel van OpenAI: `{oai}`"),
        ("url", "Verbinding: postgres://admin:{upw}@db.intern:5432/klanten"),
        (
            "table",
            (
                "| Dienst | Gebruiker | Wachtwoord |\n|---|---|---|\n"
                "| Urenregistratie | pdevries | {pw} |"
            ),
        ),
        ("config", "mail:\n  gebruiker: noreply\n  wachtwoord: {pw}"),
        (
            "email",
            (
                "Onderwerp: inloggegevens\n\nBeste Sanne,\n\n"
                "Je gebruikersnaam is sanne.b en je tijdelijke wachtwoord is {pw}\n\nGroet,\nICT"
            ),
        ),
        ("chat", "wat was het wachtwoord van de router ook alweer?\n— {pw}"),
        ("note", "Toegangscode van de fietsenstalling: {acode}"),
        ("note", "Slack-bottoken: {xoxb}"),
        ("note", "Geheime sleutel van AWS: {awss}"),
    ],
)

_E8_NL_NEG = _e8_neg(
    "nl",
    [
        ("prose", "Ik heb gisteren mijn wachtwoord gereset."),
        ("prose", "Het wachtwoord moet minstens 12 tekens bevatten."),
        ("note", "Link om je wachtwoord te herstellen: https://example.com/reset"),
        ("note", "wachtwoord: ********"),
        ("prose", "De sleutel tot succes is volharding."),
        ("chat", "De sleutel van de schuur ligt bij de buren."),
        ("prose", "De pincode heeft 4 cijfers."),
        ("note", "Bestelnummer: 2024-61830, levering op 18-03-2025"),
        ("note", "SHA-256-controlesom: {HASH}"),
        ("note", "Publieke sleutel: ssh-ed25519 {PUB} bram@laptop"),
        ("prose", "Het wachtwoord staat in de gedeelde Bitwarden-kluis."),
        ("prose", "Versie 4.0.2: het token verloopt na 15 minuten."),
        ("note", "Telefoon: 020 123 4567"),
    ],
)

# --- Polish -------------------------------------------------------------------------------

_E8_PL = _e8_pos(
    "pl",
    [
        ("note", "Hasło do wifi: {pw}"),
        ("prose", "Hasło do poczty to {pw}"),
        ("prose", "Zaloguj się loginem admin i hasłem {pw}."),
        ("note", "PIN do karty: {pin4}"),
        ("note", "Token GitHuba: {ghp}"),
        ("prose", "Klucz API OpenAI: `{oai}`"),
        ("url", "Połączenie: postgres://kadry:{upw}@db.wewn:5432/kadry"),
        ("table", "| Usługa | Login | Hasło |\n|---|---|---|\n| Płace | akowalska | {pw} |"),
        ("config", "poczta:\n  uzytkownik: powiadomienia\n  haslo: {pw}"),
        (
            "email",
            (
                "Temat: dostęp do serwera\n\nDzień dobry,\n\nlogin: j.nowak\n"
                "hasło tymczasowe: {pw}\n\nProszę je zmienić przy pierwszym logowaniu.\n\n"
                "Pozdrawiam,\nDział IT"
            ),
        ),
        ("note", "Kod dostępu do furtki: {acode}"),
        ("note", "Token bota Slacka: {xoxb}"),
        ("note", "Tajny klucz AWS: {awss}"),
        ("chat", "Ustawiłem nowe hasło: {pw}, zmień je potem."),
    ],
)

_E8_PL_NEG = _e8_neg(
    "pl",
    [
        ("prose", "Wczoraj zresetowałem hasło do poczty."),
        ("prose", "Hasło musi mieć co najmniej 12 znaków."),
        ("note", "Link do resetu hasła: https://example.com/reset"),
        ("note", "hasło: ********"),
        ("prose", "Kluczem do sukcesu jest systematyczność."),
        ("chat", "Zostawiłem klucze do mieszkania w biurze."),
        ("prose", "PIN ma 4 cyfry."),
        ("note", "Numer zamówienia: 2024-40127, dostawa 18.03.2025"),
        ("note", "Suma kontrolna SHA-256: {HASH}"),
        ("note", "Klucz publiczny: ssh-ed25519 {PUB} tomek@laptop"),
        ("prose", "Hasło jest w firmowym sejfie Bitwarden."),
        ("prose", "Hasło przewodnie konferencji to „Bezpieczeństwo przede wszystkim”."),
        ("prose", "Na początku pięciolinii stoi klucz wiolinowy."),
    ],
)

# --- Chinese ------------------------------------------------------------------------------

_E8_ZH = _e8_pos(
    "zh",
    [
        ("prose", "WiFi密码是{pw}"),
        ("note", "服务器登录密码：{pw}"),
        ("chat", "银行卡密码{pin6}，别告诉别人"),
        ("note", "GitHub令牌：{ghp}"),
        ("prose", "OpenAI的API密钥：`{oai}`"),
        ("url", "数据库连接：mysql://app:{upw}@10.0.0.5:3306/shop"),
        ("table", "| 服务 | 用户名 | 密码 |\n|---|---|---|\n| 报销系统 | zhangwei | {pw} |"),
        ("config", "邮件:\n  用户: notice\n  密码: {pw}"),
        (
            "email",
            "主题：服务器账号\n\n王经理您好，\n\n账号：wang.li\n初始密码：{pw}\n\n请首次登录后修改。\n\n信息部",
        ),
        ("chat", "路由器密码多少来着？\n——{pw}"),
        ("note", "门禁密码：{pin4}"),
        ("note", "Slack机器人令牌：{xoxb}"),
        ("note", "AWS访问密钥ID：{akia}"),
        ("note", "阿里云AccessKey Secret：{tok}"),
    ],
)

_E8_ZH_NEG = _e8_neg(
    "zh",
    [
        ("prose", "昨天重置了邮箱密码。"),
        ("prose", "密码长度至少12位，需包含数字和符号。"),
        ("note", "重置密码链接：https://example.com/reset"),
        ("note", "密码：********"),
        ("prose", "成功的关键在于坚持。"),
        ("chat", "钥匙落在办公室了。"),
        ("prose", "PIN码为6位数字。"),
        ("note", "订单号：2024031588123，预计3月18日送达。"),
        ("note", "SHA-256校验值：{HASH}"),
        ("note", "公钥：ssh-ed25519 {PUB} li@mac"),
        ("prose", "密码保存在团队的Bitwarden保险库里。"),
        ("prose", "密码学课程下周开始。"),
        ("prose", "上下文上限为128,000个token。"),
    ],
)

# --- English ------------------------------------------------------------------------------

_E8_EN = _e8_pos(
    "en",
    [
        ("prose", "The wifi password is {pw}"),
        ("note", "wifi: {pw}"),
        ("note", "Card PIN: {pin4}"),
        ("note", "GitHub token: {ghp}"),
        ("prose", "OpenAI API key — `{oai}`"),
        ("url", "Connection string: postgres://reporting:{upw}@db.internal:5432/warehouse"),
        ("table", "| Service | User | Password |\n|---|---|---|\n| Payroll | jdoe | {pw} |"),
        (
            "email",
            (
                "Subject: your account\n\nHi Sam,\n\n"
                "Your username is sam.k and the temporary password is {pw}\n\n"
                "Please change it after you log in.\n\nThanks,\nIT"
            ),
        ),
        ("chat", "what's the router pw again?\n-> {pw}"),
        ("prose", "Passphrase for the backup key:\n{pw}"),
        ("note", "Door access code: {acode}"),
        ("note", "Stripe live secret key: {sklive}"),
        ("prose", "Slack bot token is {xoxb}"),
        ("note", "Anthropic key: {ant}"),
    ],
)

_E8_EN_NEG = _e8_neg(
    "en",
    [
        ("prose", "I reset my password yesterday."),
        ("prose", "The password must be at least 12 characters long."),
        ("note", "Password reset link: https://example.com/reset"),
        ("note", "password: <password>"),
        ("prose", "The key to success is consistency."),
        ("note", "PIN code length: 6 digits"),
        ("note", "Order #2024-118734 ships on 2025-03-18."),
        ("note", "sha256: {HASH}"),
        ("note", "Public key: ssh-ed25519 {PUB} sam@laptop"),
        ("prose", "The password is in the team 1Password vault under 'Router'."),
        ("prose", "Set OPENAI_API_KEY in your shell; the app reads it from the environment."),
        ("note", "Token limit: 200,000 per request."),
        ("list", "Key takeaways:\n- ship smaller PRs\n- write tests first"),
    ],
)

# --- language-free ------------------------------------------------------------------------

_E8_ANY = _e8_pos(
    "any",
    [
        ("config", "DATABASE_URL=postgres://app:{upw}@db:5432/app"),
        ("config", "export GITHUB_TOKEN={ghp}"),
        ("config", "Authorization: Bearer {jwt}"),
        ("config", "curl -H 'X-Api-Key: {tok}' https://api.example.com/v1/items"),
        ("config", '{"apiKey": "{aiza}", "projectId": "demo-app"}'),
        ("config", "AWS_SECRET_ACCESS_KEY={awss}"),
        ("config", "npm config set //registry.npmjs.org/:_authToken {npm}"),
        ("config", "SENDGRID_API_KEY={sg}"),
        ("url", "redis://:{upw}@cache:6379/0"),
        ("config", "[default]\naws_access_key_id = {akia}\nregion = eu-west-1"),
        ("config", "HF_TOKEN={hf}"),
        ("config", "- name: deploy\n  env:\n    SLACK_TOKEN: {xoxb}"),
        ("url", "https://api.telegram.org/bot{tg}/sendMessage"),
    ],
)

_E8_ANY_NEG = _e8_neg(
    "any",
    [
        ("config", "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app"),
        ("config", "export GITHUB_TOKEN=$(gh auth token)"),
        ("config", "Authorization: Bearer <token>"),
        ("config", "sha256:{HASH}"),
        ("config", "image: ghcr.io/acme/api@sha256:{HASH}"),
        ("config", "{UUID}"),
        ("config", "v2.14.0-rc.3 (build 48121)"),
        ("config", "ssh-ed25519 {PUB} deploy@ci"),
        ("config", "git checkout {COMMIT}"),
        ("config", "API_KEY=your-api-key-here"),
        ("config", 'password: "{{ vault_db_password }}"'),
        ("config", "token: ${{ secrets.GITHUB_TOKEN }}"),
        ("config", "192.168.1.24:8080/health -> 200 OK (12 ms)"),
    ],
)


# --- encoded / obfuscated (language-free) ---------------------------------------------------


def _e8_b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _e8_encoded() -> list[Case]:
    pos: list[tuple[str, str]] = []  # (text, secret)

    ghp1 = _e8_value("ghp", "enc-1")
    s = _e8_b64(ghp1)
    pos.append((f"GH_TOKEN_B64={s}", s))

    sk2 = _e8_value("sklive", "enc-2")
    s = _e8_b64(sk2)
    pos.append(
        (
            (
                f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: payments\ntype: Opaque\n"
                f"data:\n  stripe-key: {s}"
            ),
            s,
        )
    )

    xo3 = _e8_value("xoxb", "enc-3")
    s = _e8_b64(xo3)
    pos.append((f"echo {s} | base64 -d > ~/.slack-token", s))

    sk4 = _e8_value("sklive", "enc-4")
    s = sk4.replace("_", "%5F")
    pos.append((f"https://hooks.example.com/pay?key={s}&mode=live", s))

    xo5 = _e8_value("xoxb", "enc-5")
    s = xo5.replace("-", "%2D")
    pos.append((f"POST /notify?token={s}&channel=C0123", s))

    ghp6 = _e8_value("ghp", "enc-6")
    s = ghp6.replace("_", "&#95;")
    pos.append((f"<p>token: <code>{s}</code></p>", s))

    sk7 = _e8_value("sklive", "enc-7")
    s = sk7.replace("_", "&#x5F;")
    pos.append((f"<td>{s}</td>", s))

    ghp8 = _e8_value("ghp", "enc-8")
    s = ghp8[:4] + "**" + ghp8[4:12] + "**" + ghp8[12:]
    pos.append((f"token: {s}", s))

    gl9 = _e8_value("glpat", "enc-9")
    s = gl9[:6] + "`" + gl9[6:14] + "`" + gl9[14:]
    pos.append((f"CI variable → {s}", s))

    ghp10 = _e8_value("ghp", "enc-10")
    s = ghp10[:10] + "\u200b" + ghp10[10:24] + "\u200b" + ghp10[24:]
    pos.append((f"GITHUB_TOKEN={s}", s))

    oai11 = _e8_value("oai", "enc-11")
    s = oai11[:8] + "\u2060" + oai11[8:40] + "\u200c" + oai11[40:]
    pos.append((f"OPENAI_API_KEY: {s}", s))

    pw13 = _e8_pw8("e8-enc-13")
    pos.append((f"\u0440\u0430ssword: {pw13}", pw13))  # Cyrillic р, а in the label

    ak14 = _e8_value("akia", "enc-14")
    s = "\u0410\u041a" + ak14[2:]  # Cyrillic А, К in the prefix
    pos.append((f"aws_access_key_id = {s}", s))

    t15 = _e8_value("tok", "enc-15")
    pos.append((f"\u0391PI_K\u0395Y={t15}", t15))  # Greek Alpha, Epsilon in the label

    sk16 = _e8_value("sklive", "enc-16")
    s = sk16.replace("live", "l\u0456ve")  # Cyrillic і
    pos.append((f"stripe: {s}", s))

    neg: list[str] = [
        f"![chart](data:image/png;base64,{_E8_IMG})",
        _e8_b64("Notes from the Monday sync: ship the importer, fix the flaky test, review docs."),
        f"{_E8_HASH}  memdir-1.4.0.tar.gz",
        "https://www.example.com/search?q=caf%C3%A9%20cr%C3%A8me%20br%C3%BBl%C3%A9e&page=2",
        "<p>Tom &amp; Jerry &mdash; &copy; 2024 &laquo;Studio&raquo; &#169; &#x2014;</p>",
        "config=" + _e8_b64('{"theme":"dark","lang":"fr","pageSize":50}'),
        "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
        "https://files.example.com/shared/report%5F2024%5Fq3%2Dfinal.pdf",
        "Donau\u200bdampfschiff\u200bfahrts\u200bgesellschaft\u200bskapitän",
        "Y\u043eur \u043erder h\u0430s shipped and will arrive on Thursday.",
        "The **key** point: keep `max_tokens` under 4096 and use _snake_case_ names.",
        f"Merge commit {_E8_COMMIT} into main",
        f"authorized_keys: ssh-ed25519 {_E8_PUB} ops@bastion",
        "<label>Set user&#95;name&#95;display to true in the profile form.</label>",
        "msg=" + _e8_b64("Order 2024-118734 shipped to Lyon on 18 March."),
    ]

    cases: list[Case] = []
    for i, (text, secret) in enumerate(pos):
        cases.append(Case(f"e8-e{i:02d}-p-any-encoded", "any", "encoded", text, secret))
    for i, text in enumerate(neg):
        cases.append(Case(f"e8-e{i:02d}-n-any-encoded", "any", "encoded", text))
    return cases


_E8_ENCODED = _e8_encoded()

_E8_CASES: list[Case] = [
    *_E8_EN,
    *_E8_EN_NEG,
    *_E8_DE,
    *_E8_DE_NEG,
    *_E8_FR,
    *_E8_FR_NEG,
    *_E8_ES,
    *_E8_ES_NEG,
    *_E8_IT,
    *_E8_IT_NEG,
    *_E8_PT,
    *_E8_PT_NEG,
    *_E8_NL,
    *_E8_NL_NEG,
    *_E8_RU,
    *_E8_RU_NEG,
    *_E8_PL,
    *_E8_PL_NEG,
    *_E8_TR,
    *_E8_TR_NEG,
    *_E8_ZH,
    *_E8_ZH_NEG,
    *_E8_JA,
    *_E8_JA_NEG,
    *_E8_KO,
    *_E8_KO_NEG,
    *_E8_ANY,
    *_E8_ANY_NEG,
    *_E8_ENCODED,
]


def _e8_check() -> None:
    ids = [c.id for c in _E8_CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for c in _E8_CASES:
        assert c.id.startswith("e8-")
        if c.secret:
            assert c.text.count(c.secret) == 1, c.id
            c.line  # noqa: B018 - must not raise


_e8_check()

EIGHTH: tuple[Case, ...] = tuple(_E8_CASES)

ALL: tuple[Case, ...] = (
    TUNING + HELD + FRESH + LATE + BLIND + SIXTH + SEVENTH + ENCODED + EIGHTH + NINTH + TENTH
)
