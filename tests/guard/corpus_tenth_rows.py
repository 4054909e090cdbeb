"""Rows of the tenth batch (`TENTH`, in `corpus_tenth`): per language, (positives, negatives).

Positive templates mark the value with a §name§ marker filled from a seeded generator in
`corpus_tenth`; no realistic credential is stored literally.
"""

from __future__ import annotations

from .corpus import B64, HEX, tok, uuid

__all__ = ["IMG", "MD5", "PUBKEY", "ROWS", "SHA1", "SHA256", "UUID", "UUID2", "Row"]

Row = tuple[str, str]
ROWS: dict[str, tuple[list[Row], list[Row]]] = {}
SHA256 = tok("t10-sha", HEX, 64)
SHA1 = tok("t10-commit", HEX, 40)
MD5 = tok("t10-md5", HEX, 32)
UUID = uuid("t10-uuid")
UUID2 = uuid("t10-uuid2")
PUBKEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("t10-pub", B64, 43) + " lena@laptop"
IMG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + tok("t10-img", B64, 56) + "="
IBAN = "DE89 3704 0044 0532 0130 00"

# ---------------------------------------------------------------- en
ROWS["en"] = (
    [
        ("prose", 'The wifi at the cabin is "§pw§" — the router is behind the bookshelf.'),
        ("prose", "Mum's iPad passcode is §pin§, she keeps forgetting it."),
        ("chat", "Sam: what's the gate code for the loading dock?\nPriya: §code§"),
        ("chat", "> pw for the staging admin?\n- §pw§ (rotate after the demo)"),
        (
            "email",
            "Hi Tom,\n\nHanding over the billing box before my leave. Root login is root / "
            "§pw§ and the VPN profile is on the shared drive.\n\nCheers,\nAnna",
        ),
        (
            "list",
            "TODO before Friday:\n- [ ] renew cert\n- [x] new deploy token: §glpat§\n- [ ] "
            "tell Raj",
        ),
        (
            "table",
            "| service | user | password |\n|---|---|---|\n| grafana | admin | §pw§ |\n| "
            "jenkins | ci | see vault |",
        ),
        (
            "config",
            "# .env.production\nSTRIPE_SECRET_KEY=§sklive§\n"
            "STRIPE_PUBLISHABLE_KEY=pk_live_see_dashboard",
        ),
        ("config", "[default]\naws_access_key_id = §akia§\nregion = eu-west-1"),
        (
            "config",
            "[default]\naws_access_key_id = AKIA... (see below)\naws_secret_access_key = §awss§",
        ),
        ("url", "Prod DB: postgres://reporting:§pw§@db-prod-3.internal:5432/analytics"),
        ("prose", "Run `mysql -u backup -p§pw§ -h 10.0.4.12 inventory` to dump the tables."),
        (
            "prose",
            "Quick test: curl -u deploy:§pw§ https://nexus.corp.example/service/rest/v1/status",
        ),
        ("config", "Authorization: Bearer §bearer§"),
        ("prose", "Partner API token (expires in March): §jwt§"),
        ("config", "deploy key for the mirror:\n§pem§"),
        ("list", "GitHub recovery codes (keep!):\n§rec§\n" + "k2m9-x7pq\nr4t1-0zz8"),
        ("prose", "Security question for the bank — mother's maiden name: §maiden§"),
        ("prose", "New 1Password master passphrase is §phrase§ until I set up the yubikey."),
        ("chat", "Leo: alarm code?\nMe: §code§ then wait for the beep"),
        ("config", "slack:\n  bot_token: §xoxb§\n  channel: '#ops-alerts'"),
        ("prose", "OpenAI key for the summariser prototype: `§skproj§`"),
        ("config", "machine api.heroku.com\n  login lena@example.org\n  password §bearer§"),
        ("prose", "The safe in the back office opens with §pin§ (turn left first)."),
        ("table", "Shopify admin token | §shpat§ | created by Dana"),
        ("prose", "HF token for pulling the gated model: §hf§"),
    ],
    [
        ("prose", "Passwords must be at least 14 characters and can't reuse the last 5."),
        (
            "prose",
            'The staging password is in Bitwarden under "Staging / admin" — ask Dana for access.',
        ),
        ("config", "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app"),
        ("config", "password: <your-password-here>\nusername: <your-username>"),
        (
            "prose",
            "Key takeaway from the retro: we ship smaller PRs and pin the tab with the runbook.",
        ),
        ("prose", "Code freeze starts Thursday 18:00; dress code for the offsite is casual."),
        ("prose", "Release tarball sha256: " + SHA256),
        ("prose", "Fixed in commit " + SHA1 + ", deployed to prod on 4 March."),
        (
            "prose",
            "Order number 114-3382910-2231456, tracking 1Z999AA10123456784, arriving Tuesday.",
        ),
        (
            "prose",
            "Password reset link: https://accounts.example.com/reset (valid 24h, they email it "
            "to you).",
        ),
        ("prose", "PIN length: 6 digits. Token count for the long context model: 128000."),
        ("prose", "My public key for the build box: " + PUBKEY),
        (
            "chat",
            "Ana: what's the wifi password?\nBen: it's on the fridge, I'm not typing it in chat",
        ),
        ("prose", "Zip code for the warehouse is 94107, room 4.12 on the fourth floor."),
        ("prose", "It was a token gesture, really — the old PIN-up poster stayed on the wall."),
        ("config", 'api_key: "********"\nendpoint: https://api.example.com/v2'),
        (
            "list",
            "- rotate the Slack bot token (done)\n- revoke Sam's GitHub PAT\n- update the "
            "password policy doc",
        ),
        (
            "table",
            "| item | value |\n|---|---|\n| tenant id | " + UUID + " |\n| region | eu-central |",
        ),
        (
            "prose",
            "The default admin password is changeme — the installer forces you to change it on "
            "first login.",
        ),
        (
            "email",
            "Hi all,\n\nReminder: never paste credentials into tickets. Use the vault link "
            "instead.\n\nThanks,\nIT",
        ),
        ("prose", "Invoice INV-2024-0457, VAT number GB123456789, total £1,240.00 due 30 June."),
        ("prose", "Call the locksmith on +44 20 7946 0958 if the key card reader fails again."),
        ("config", 'export GITHUB_TOKEN=$(gh auth token)\nexport OPENAI_API_KEY="$OPENAI_KEY"'),
        (
            "prose",
            "Upgraded to postgres 16.2 and node v20.11.1; the lockfile lives at "
            "~/src/app/package-lock.json.",
        ),
        ("prose", "Logo placeholder: " + IMG),
    ],
)

# ---------------------------------------------------------------- de
ROWS["de"] = (
    [
        ("prose", "Das WLAN-Passwort im Ferienhaus ist §pw§, der Router steht im Flur."),
        ("prose", "Der PIN für Omas Handy ist §pin§."),
        ("chat", "Jonas: Wie war nochmal der Code fürs Garagentor?\nMia: §code§"),
        ("chat", "Hast du das Passwort vom NAS?\n– ja: „§pw§“"),
        (
            "email",
            "Hallo Frau Becker,\n\nanbei die Zugangsdaten für das Kundenportal: Benutzer "
            "m.koch, Kennwort §pw§.\nBitte nach dem ersten Login ändern.\n\nViele Grüße\n"
            "Markus Koch",
        ),
        (
            "list",
            "Übergabe:\n- Schlüssel liegt beim Empfang\n- Alarmanlage: §code§\n- Müll am "
            "Dienstag raus",
        ),
        ("table", "| Dienst | Login | Kennwort |\n|---|---|---|\n| Fritzbox | admin | §pw§ |"),
        (
            "config",
            "# docker-compose.yml\nservices:\n  db:\n    image: postgres:16\n    environment:\n"
            "      POSTGRES_PASSWORD: §pw§",
        ),
        ("url", "Verbindung: mysql://shop:§pw§@10.1.2.3:3306/warenwirtschaft"),
        ("prose", "GitHub-Token für das Release-Skript: §ghp§"),
        (
            "prose",
            'Zum Testen: `curl -H "Authorization: Bearer §bearer§" https://api.intern/v1/health`',
        ),
        ("config", "[smtp]\nhost = mail.firma.de\nuser = noreply\npasswort = §pw§"),
        ("prose", "Tresor im Büro: Kombination §pin§, nur für Notfälle."),
        ("prose", "Mein Passwort für das Elster-Portal ist ›§pw§‹."),
        ("list", "Wiederherstellungscodes Google-Konto:\n1. §rec§\n2. a8k2-9fmz\n3. pq71-0rwx"),
        ("prose", "Sicherheitsfrage Sparkasse – Geburtsname der Mutter: §maiden§"),
        ("config", "GITLAB_TOKEN=§glpat§"),
        ("prose", "Die Passphrase für den Schlüssel lautet: §phrase§"),
        ("chat", "Kannst du mir den Slack-Token schicken?\n§xoxp§"),
        (
            "config",
            "spring.datasource.url=jdbc:postgresql://db:5432/kasse\n"
            "spring.datasource.username=kasse\nspring.datasource.password=§pw§",
        ),
        ("prose", "Privater Schlüssel für den Jumphost (nicht weitergeben):\n§pem§"),
        ("prose", "Der Google-Maps-Key ist `§aiza§`, Kontingent 10k pro Tag."),
        ("prose", "Haustür unten: §code§ drücken, dann klingeln."),
        ("table", "Anthropic API | §skant§ | Team KI"),
        ("prose", "Das neue Kennwort ist §pw§ – bitte nicht ins Ticket kopieren."),
    ],
    [
        (
            "prose",
            "Passwörter müssen mindestens 12 Zeichen haben und alle 90 Tage geändert werden.",
        ),
        ("prose", "Das Kennwort steht in KeePass unter „Server / Backup“."),
        ("config", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\nPOSTGRES_USER: app"),
        ("prose", "Die wichtigste Erkenntnis (key takeaway) aus dem Workshop: weniger Meetings."),
        ("prose", "Ab Montag gilt Code-Freeze, der Dresscode beim Kundentermin ist Business."),
        ("prose", "Prüfsumme (SHA-256) der ISO: " + SHA256),
        ("prose", "Bestellnummer 302-5571904-118, Sendungsnummer 00340434161094042557."),
        ("prose", "IBAN für die Miete: " + IBAN + ", Verwendungszweck Wohnung 3."),
        (
            "prose",
            "Link zum Zurücksetzen des Passworts: https://konto.example.de/passwort-vergessen",
        ),
        ("prose", "PIN-Länge: 6 Ziffern, die PUK liegt im Brief der Telekom."),
        ("chat", "Wie lautet das WLAN-Passwort?\n– Steht auf der Rückseite vom Router."),
        ("prose", "Postleitzahl 80331, Raum 2.14, Telefon 089 12345678."),
        ("config", 'passwort: "<hier eintragen>"\nbenutzer: "<name>"'),
        (
            "list",
            "- Passwortrichtlinie überarbeiten\n- 2FA für alle Admins aktivieren\n- alte "
            "Tokens widerrufen",
        ),
        ("prose", "Das Standardpasswort „changeme“ muss bei der Ersteinrichtung geändert werden."),
        (
            "table",
            "| Feld | Wert |\n|---|---|\n| Mandanten-ID | " + UUID + " |\n| Version | 3.4.1 |",
        ),
        (
            "email",
            "Hallo zusammen,\n\nbitte keine Zugangsdaten per Mail verschicken, nutzt den "
            "Passwortmanager.\n\nGruß\nIT",
        ),
        ("prose", "Der Schlüssel zum Erfolg war die Pinnwand im Flur."),
        ("prose", "Commit " + SHA1 + " behebt den Login-Fehler."),
        ("prose", "Rechnung RE-2024-118, USt-IdNr. DE123456789, Betrag 1.499,00 €."),
        ("config", 'api_key = "xxx"  # eigenen Schlüssel eintragen'),
        ("prose", "Öffentlicher SSH-Schlüssel: " + PUBKEY),
        ("prose", "Tokenanzahl pro Anfrage: 4096, Timeout 30 s."),
        (
            "prose",
            "Die Geheimzahl der EC-Karte hat die Bank per Post geschickt – der Brief liegt im "
            "Ordner Finanzen.",
        ),
        ("prose", "Die Datei liegt unter /home/mia/projekte/kasse/config/settings.yaml."),
    ],
)

# ---------------------------------------------------------------- fr
ROWS["fr"] = (
    [
        ("prose", "Le mot de passe du wifi de la maison de campagne est «\u00a0§pw§\u00a0»."),
        ("prose", "Le code de la porte de l'immeuble est §code§."),
        ("chat", "Julie : c'est quoi le mdp du compte Canal+ ?\nThomas : §pw§"),
        ("chat", "— Tu as le code de l'alarme ?\n— oui, §code§"),
        (
            "email",
            "Bonjour Claire,\n\nVoici les accès au serveur de préprod : identifiant deploy, "
            "mot de passe §pw§.\nMerci de le changer après la mise en prod.\n\nBien à vous,\n"
            "Nicolas",
        ),
        (
            "list",
            "À faire :\n- relancer le fournisseur\n- clé API Stripe : §rklive§\n- mettre à "
            "jour le wiki",
        ),
        (
            "table",
            "| Service | Identifiant | Mot de passe |\n|---|---|---|\n| Freebox | admin | §pw§ |",
        ),
        ("config", "DB_HOST=localhost\nDB_USER=compta\nDB_PASSWORD=§pw§"),
        ("url", "Base : mongodb://appuser:§pw§@cluster0.mongo.internal:27017/boutique"),
        ("prose", "Le code PIN de ma carte SIM est §pin§."),
        ("prose", "Jeton GitHub pour la CI : `§ghp§`"),
        ("config", "[client]\nuser=admin\npassword=§pw§"),
        ("prose", 'Lancer `psql "postgresql://stats:§pw§@10.0.0.8/stats"` pour vérifier.'),
        ("prose", "La clé d'API OpenAI est §skproj§ (compte de l'équipe data)."),
        ("prose", "Question secrète de la banque – nom de jeune fille de la mère : §maiden§"),
        ("list", "Codes de secours Microsoft :\n§rec§\nm2x8-77ka\nzp0q-4nv1"),
        ("config", "slack_webhook_token: §xoxb§"),
        ("prose", "Phrase de passe du coffre KeePass : §phrase§"),
        ("prose", "Digicode du local vélos : §code§"),
        ("prose", "Clé privée du serveur de sauvegarde :\n§pem§"),
        ("config", "SENDGRID_API_KEY=§sg§"),
        ("prose", "Mon mot de passe Ameli est §pw§, ne le dis à personne."),
        ("chat", "Quel est le token Hugging Face ?\n→ §hf§"),
        ("config", '"Authorization": "Bearer §jwt§"'),
        ("prose", "Le coffre-fort de l'hôtel : §pin§"),
    ],
    [
        ("prose", "Le mot de passe doit contenir au moins 12 caractères dont un chiffre."),
        ("prose", "Les identifiants sont dans Bitwarden, élément « Préprod / admin »."),
        ("config", "DB_PASSWORD=${DB_PASSWORD}\nDB_USER=compta"),
        ("prose", "Le code vestimentaire pour le séminaire : tenue correcte exigée."),
        ("prose", "Gel du code (code freeze) à partir de jeudi, pas de mise en prod."),
        ("prose", "Empreinte SHA-256 de l'archive : " + SHA256),
        ("prose", "Numéro de commande 4012-88731, numéro de suivi 6A12345678901."),
        ("prose", "Code postal 69003, bureau 214, téléphone 04 72 00 00 00."),
        (
            "prose",
            "Lien de réinitialisation du mot de passe : "
            "https://compte.example.fr/mot-de-passe-oublie",
        ),
        ("prose", "Longueur du code PIN : 4 chiffres. Le PUK est sur la carte."),
        ("chat", "— C'est quoi le mot de passe du wifi ?\n— Il est sur l'étiquette sous la box."),
        ("config", 'mot_de_passe: "<à remplir>"'),
        (
            "list",
            "- changer la politique de mots de passe\n- activer la double authentification\n- "
            "révoquer les anciens jetons",
        ),
        (
            "prose",
            "Le mot de passe par défaut « changeme » doit être modifié à la première connexion.",
        ),
        (
            "table",
            "| Champ | Valeur |\n|---|---|\n| ID client | " + UUID + " |\n| Version | 2.7.0 |",
        ),
        (
            "email",
            "Bonjour à tous,\n\nmerci de ne jamais envoyer de mot de passe par e-mail.\n\n"
            "L'équipe IT",
        ),
        ("prose", "La clé du succès, c'est la régularité."),
        ("prose", "Correctif dans le commit " + SHA1 + "."),
        ("prose", "Facture F-2024-031, n° TVA FR12345678901, montant 320,00 €."),
        ("prose", "Clé publique SSH : " + PUBKEY),
        ("prose", "Nombre de jetons par requête : 8192."),
        ("config", 'api_key: "********"'),
        ("prose", "IBAN du syndic : FR76 3000 6000 0112 3456 7890 189."),
        ("prose", "Le fichier est dans ~/Documents/impots/2023/avis.pdf, version 3."),
        ("prose", "Un geste symbolique (token) de la direction, rien de plus."),
    ],
)

# ---------------------------------------------------------------- es
ROWS["es"] = (
    [
        ("prose", "La contraseña del wifi del piso es §pw§."),
        ("prose", "El PIN de la tarjeta del gimnasio es §pin§."),
        ("chat", "Lucía: ¿cuál es la clave del portal?\nDiego: §code§"),
        ("chat", "¿Me pasas la contraseña del router?\n- «§pw§»"),
        (
            "email",
            "Hola Marta:\n\nTe dejo los accesos del servidor de pruebas: usuario soporte, "
            "contraseña §pw§.\nCámbiala cuando puedas.\n\nUn saludo,\nÁlvaro",
        ),
        ("list", "Pendientes:\n- pagar la luz\n- token de GitLab: §glpat§\n- llamar al fontanero"),
        (
            "table",
            "| Servicio | Usuario | Contraseña |\n|---|---|---|\n| Movistar | admin | §pw§ |",
        ),
        ("config", "MYSQL_ROOT_PASSWORD=§pw§\nMYSQL_DATABASE=tienda"),
        ("url", "Cadena de conexión: Server=sql01;Database=ventas;User Id=sa;Password=§pw§;"),
        ("prose", "Código de la alarma de la oficina: §code§"),
        ("prose", "La clave secreta de Stripe es `§sklive§`."),
        ("prose", "Para probar: `curl -u admin:§pw§ http://192.168.1.20:8080/api`"),
        ("config", "github:\n  token: §ghf§"),
        ("prose", "Pregunta de seguridad – apellido de soltera de mi madre: §maiden§"),
        ("list", "Códigos de recuperación de Instagram:\n§rec§\n7hq2-p0zd\nkk91-x3mc"),
        ("prose", "La frase de contraseña de la cartera es: §phrase§"),
        ("prose", "Caja fuerte del hotel: §pin§"),
        ("config", "aws_access_key_id=§akia§"),
        ("prose", "Clave privada para el servidor de backups:\n§pem§"),
        ("chat", "¿Y el token del bot de Slack?\n§xoxb§"),
        ("prose", "Mi contraseña del banco es «§pw§», apúntala en tu libreta."),
        ("config", "OPENAI_API_KEY=§skproj§"),
        ("prose", "Clave de API de Google Maps: §aiza§"),
        ("config", "Authorization: Bearer §bearer§"),
        ("prose", "El código del trastero es §code§."),
    ],
    [
        ("prose", "La contraseña debe tener al menos 10 caracteres y un símbolo."),
        ("prose", "La contraseña está en 1Password, en la bóveda «Oficina»."),
        ("config", "MYSQL_ROOT_PASSWORD=${MYSQL_ROOT_PASSWORD}"),
        ("prose", "La clave del éxito fue la comunicación con el cliente."),
        ("prose", "Código de vestimenta: informal. Congelación de código desde el lunes."),
        ("prose", "Hash SHA-256 del instalador: " + SHA256),
        ("prose", "Número de pedido 408-1234567-8901234, seguimiento ES123456789."),
        ("prose", "Código postal 28013, sala 3B, teléfono +34 912 345 678."),
        ("prose", "Enlace para restablecer la contraseña: https://cuenta.example.es/recuperar"),
        ("prose", "Longitud del PIN: 4 dígitos."),
        ("chat", "¿Cuál es la contraseña del wifi?\n- Está en la pegatina del router."),
        ("config", 'password: "<tu-contraseña>"'),
        (
            "list",
            "- actualizar la política de contraseñas\n- activar 2FA\n- revocar tokens antiguos",
        ),
        ("prose", "La contraseña por defecto «changeme» hay que cambiarla al primer inicio."),
        ("table", "| Campo | Valor |\n|---|---|\n| ID de cliente | " + UUID + " |"),
        (
            "email",
            "Hola a todos:\n\nno enviéis contraseñas por correo, usad el gestor.\n\nSistemas",
        ),
        ("prose", "Arreglado en el commit " + SHA1 + "."),
        ("prose", "Factura 2024/118, NIF B12345678, importe 980,00 €."),
        ("prose", "Clave pública SSH: " + PUBKEY),
        ("prose", "Límite de tokens por petición: 4096."),
        ("config", 'api_key: "xxxxxxxx"'),
        ("prose", "IBAN para la transferencia: ES91 2100 0418 4502 0005 1332."),
        ("prose", "Versión 5.2.1 instalada en /opt/tienda/bin."),
        ("prose", "Fue un gesto simbólico, nada más."),
        ("prose", "El UUID del dispositivo es " + UUID2 + "."),
    ],
)

# ---------------------------------------------------------------- it
ROWS["it"] = (
    [
        ("prose", "La password del wifi in ufficio è §pw§."),
        ("prose", "Il PIN del bancomat della nonna è §pin§."),
        ("chat", "Giulia: qual è il codice del cancello?\nMarco: §code§"),
        ("chat", "Mi mandi la password di Netflix?\n- «§pw§»"),
        (
            "email",
            "Ciao Luca,\n\nti lascio le credenziali del gestionale: utente amministrazione, "
            "password §pw§.\nCambiala appena puoi.\n\nA presto,\nFrancesca",
        ),
        ("list", "Da fare:\n- rinnovare il dominio\n- token HF: §hf§\n- aggiornare il wiki"),
        ("table", "| Servizio | Utente | Password |\n|---|---|---|\n| TIM Hub | admin | §pw§ |"),
        ("config", "DB_PASS=§pw§\nDB_NAME=magazzino"),
        ("url", "redis://:§pw§@cache.interno:6379/0"),
        ("prose", "Codice dell'allarme di casa: §code§"),
        ("prose", "La chiave API di Anthropic è `§skant§`."),
        ("prose", "Comando: `mysql -h db1 -u report -p§pw§ vendite`"),
        ("config", "gitlab:\n  private_token: §glpat§"),
        ("prose", "Domanda di sicurezza – cognome da nubile della madre: §maiden§"),
        ("list", "Codici di backup Google:\n§rec§\nw8e2-9jxk\n0mmp-4tqa"),
        ("prose", "La passphrase del portafoglio è: §phrase§"),
        ("prose", "Cassaforte della camera: §pin§"),
        ("config", "aws_secret_access_key = §awss§"),
        ("prose", "Chiave privata del server:\n§pem§"),
        ("chat", "Il token di Slack?\n§xoxp§"),
        ("prose", 'La mia password dello SPID è "§pw§".'),
        ("config", "SHOPIFY_ADMIN_TOKEN=§shpat§"),
        ("prose", "Token GitHub per il deploy: §ghp§"),
        ("config", "Authorization: Bearer §jwt§"),
        ("prose", "Il codice del portone è §code§."),
    ],
    [
        ("prose", "La password deve avere almeno 12 caratteri."),
        ("prose", "Le credenziali sono su Bitwarden, voce «Gestionale»."),
        ("config", "DB_PASS=${DB_PASS}"),
        ("prose", "Il punto chiave della riunione: rilasciare più spesso."),
        ("prose", "Dress code: elegante. Code freeze da giovedì."),
        ("prose", "Checksum SHA-256 del pacchetto: " + SHA256),
        ("prose", "Numero d'ordine 171-2233445, tracking RR123456785IT."),
        ("prose", "CAP 20121, stanza 5, telefono 02 1234 5678."),
        ("prose", "Link per reimpostare la password: https://account.example.it/reset"),
        ("prose", "Lunghezza del PIN: 5 cifre."),
        ("chat", "Qual è la password del wifi?\n- È scritta sul modem."),
        ("config", 'password: "<inserire qui>"'),
        ("list", "- rivedere la policy delle password\n- attivare l'autenticazione a due fattori"),
        ("prose", "La password predefinita «changeme» va cambiata al primo accesso."),
        ("table", "| Campo | Valore |\n|---|---|\n| ID tenant | " + UUID + " |"),
        (
            "email",
            "Ciao a tutti,\n\nnon inviate password via mail, usate il password manager.\n\nIT",
        ),
        ("prose", "Corretto nel commit " + SHA1 + "."),
        ("prose", "Fattura n. 45/2024, partita IVA IT12345678901, totale 610,00 €."),
        ("prose", "Chiave pubblica SSH: " + PUBKEY),
        ("prose", "Numero massimo di token: 16000."),
        ("config", 'api_key: "********"'),
        ("prose", "IBAN: IT60 X054 2811 1010 0000 0123 456."),
        ("prose", "Versione 1.8.3, file in /srv/magazzino/config.yml."),
        ("prose", "Un gesto simbolico, niente di più: la chiave della città al sindaco."),
        ("prose", "MD5 del file: " + MD5),
    ],
)

# ---------------------------------------------------------------- pt
