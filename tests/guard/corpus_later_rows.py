"""Rows of the ninth batch (`NINTH`, in `corpus_later`) for en, de, fr, es, it, pt, nl and ru:
(language, positive templates, negative templates), each template a (kind, text) pair whose
%%name%% markers `corpus_later` fills with seeded values.  Kept apart for size."""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS: list[tuple[str, list[tuple[str, str]], list[tuple[str, str]]]] = []

# --- en ------------------------------------------------------------------------------------
ROWS.append(
    (
        "en",
        [
            (
                "prose",
                "Heads up: the staging Jenkins admin password is %%pw%% until we rotate it on "
                "Friday.",
            ),
            ("chat", "what's the wifi in the Lisbon office?\nGuest-5G, password %%pw%%"),
            (
                "chat",
                "anyone have the alarm code for the warehouse?\n"
                "%%code%% then press ENTER, you have 30s",
            ),
            (
                "table",
                "| System | User | Password |\n|---|---|---|\n| Grafana | admin | %%pw%% |\n"
                "| Kibana | viewer | see vault |",
            ),
            ("prose", "- host: build-03.internal\n- user: deploy\n- pass: %%rnd%%\n- port: 2222"),
            (
                "config",
                "# .env for the worker\nREDIS_URL=redis://localhost:6379/0\n"
                "STRIPE_SECRET_KEY=%%sklive%%\n",
            ),
            (
                "url",
                "Connect with: "
                "postgresql://reporting:%%upw%%@pg-replica.eu-west-1.rds.amazonaws.com:5432/analytics",
            ),
            (
                "prose",
                "Hi Sam,\n\nhere are the access details for the client portal:\n"
                "user: s.okafor@acme.io\npassword: %%pw%%\n\nCheers, Dana",
            ),
            (
                "prose",
                "Meeting notes 14 Nov\n- moved CI to GitHub Actions\n"
                "- bot token for the release job: %%ghp%%\n- next sync Tuesday",
            ),
            (
                "prose",
                "Recovery codes for the shared Google account (use one, then cross it out):\n"
                "%%recov%%\n",
            ),
            ("prose", "My bank card PIN is %%pin%%, don't let me forget it again."),
            ("prose", "Gate code for Mum's building is %%code%%. Buzz flat 12 after."),
            ("config", "machine api.heroku.com\n  login ops@example.org\n  password %%hexkey%%\n"),
            ("prose", "Slack bot token (#alerts app): `%%xoxb%%`"),
            ("prose", "Password:\n%%pw%%"),
            ("prose", 'The 1Password master passphrase for the family vault is "%%phrase%%".'),
            (
                "config",
                "services:\n  db:\n    image: postgres:16\n    environment:\n"
                "      POSTGRES_USER: app\n      POSTGRES_PASSWORD: %%upw%%\n",
            ),
            (
                "prose",
                "Curl it with -H 'Authorization: Bearer %%bearer%%' and you'll get the JSON back.",
            ),
            ("prose", "OpenAI key for the eval harness: %%skproj%%"),
            ("config", "[default]\naws_access_key_id = %%akia%%\nregion = us-east-1\n"),
            ("prose", "Backup 2FA code if my phone dies: %%bk%%"),
            ("prose", "Deploy key (don't commit this!):\n%%sshkey%%"),
        ],
        [
            (
                "prose",
                "Remember to change the default router password before handing the flat over.",
            ),
            (
                "prose",
                "Password policy: at least 12 characters, one digit, no reuse of the last five.",
            ),
            ("config", "DB_PASSWORD=${DB_PASSWORD}\nSTRIPE_SECRET_KEY=your-key-here\n"),
            ("prose", 'The Grafana admin password is in 1Password under "Infra / Grafana prod".'),
            (
                "table",
                "| Service | Where the secret lives |\n|---|---|\n| Postgres | Vault kv/prod/pg |\n"
                "| Sentry | AWS Secrets Manager |",
            ),
            ("prose", "Consistency is the key to success, and so is sleep."),
            ("prose", "Dress code for Friday's dinner is smart casual."),
            ("chat", "what's the zip code for the Austin office?\n78701"),
            ("prose", "Code review on PR #482 is blocked until the tests pass."),
            ("prose", "As a token of appreciation the team got a day off in December."),
            (
                "prose",
                "The prompt was 3,200 tokens and the reply about 450 tokens; context window is "
                "128k.",
            ),
            ("prose", "Fixed in commit %%sha%% (short: %%short%%)."),
            ("prose", "SHA-256 checksum of the installer: %%hash%%"),
            ("prose", "Order number %%order%%, tracking %%track%% with UPS."),
            ("prose", "Request id %%uuid%% failed with 502 at 10:42 UTC."),
            (
                "prose",
                "Password reset link: https://accounts.example.com/reset?lang=en (expires in 30 "
                "min).",
            ),
            ("prose", "PIN length: 6 digits. Three wrong tries lock the card."),
            ("prose", "Call the front desk on +1 415 555 0133, room 1412, checkout is at 11:00."),
            ("prose", "Avatar placeholder: %%img%%"),
            ("config", "authorized_keys line for the new box:\n%%pub%%"),
            ("prose", "Password: ********  (masked in the screenshot)"),
            ("config", 'password: "{{ vault_smtp_password }}"\nuser: "<username>"'),
        ],
    )
)

# --- de ------------------------------------------------------------------------------------
ROWS.append(
    (
        "de",
        [
            ("prose", "Das Passwort für den Router im Keller ist %%pw%%, bitte nicht ändern."),
            ("chat", "Wie lautet das WLAN-Passwort im Ferienhaus?\n%%pw%%"),
            ("prose", "Zugangsdaten Steuerkanzlei:\nBenutzername: mueller.gmbh\nKennwort: %%pw%%"),
            ("prose", "Der Türcode für den Hintereingang ist %%code%%."),
            ("prose", "Meine neue EC-Karten-PIN lautet %%pin%%."),
            ("table", "| Dienst | Benutzer | Passwort |\n|---|---|---|\n| NAS | admin | %%pw%% |"),
            (
                "prose",
                "Hallo Jonas,\n\nanbei wie besprochen die Zugänge für den Shop:\nLogin: "
                "shop-admin\n"
                "Passwort: %%rnd%%\n\nViele Grüße\nKatrin",
            ),
            ("config", "# Produktivkonfiguration\nMAIL_PASSWORD=%%upw%%\nMAIL_HOST=smtp.strato.de"),
            ("url", "Die Verbindung läuft über mysql://shop:%%upw%%@db.kunde.de:3306/shop_prod"),
            (
                "prose",
                "Protokoll Teamrunde 03.12.\n- GitLab-Token für die Pipeline: %%glpat%%\n"
                "- Urlaubsplanung bis Freitag",
            ),
            ("prose", "Kennwort:\n%%pw%%"),
            ("prose", "Der Tresorcode im Büro ist %%pin%% – nur für Notfälle."),
            (
                "prose",
                "Wiederherstellungscodes fürs Firmenkonto:\n%%recov%%\n(jeweils nur einmal gültig)",
            ),
            ("prose", "Alarmanlage scharf schalten: Code %%code%% eingeben, dann Taste AUS."),
            ("config", 'spring:\n  datasource:\n    username: app\n    password: "%%upw%%"'),
            ("prose", "Der API-Schlüssel für Google Maps ist `%%aiza%%`."),
            ("prose", "Unser Passwortsatz für das Familien-Tablet: %%phrase%%"),
            ("chat", "Hast du den Token für den Bot?\nJa: %%tg%%"),
            ("prose", "Bitte den Schlüssel sicher ablegen:\n%%pem%%"),
            ("prose", "AWS Secret Access Key (Buchhaltung): %%awssec%%"),
            ("prose", "Das Kennwort ist »%%pw%%« – Groß- und Kleinschreibung beachten."),
            ("prose", "Backup-Code für die Zwei-Faktor-Anmeldung: %%bk%%"),
        ],
        [
            (
                "prose",
                "Das Passwort muss mindestens 12 Zeichen lang sein und eine Ziffer enthalten.",
            ),
            ("prose", "Das Kennwort steht im Passwortmanager unter „Kanzlei / DATEV“."),
            ("prose", "Passwort: ******** (wurde am Telefon durchgegeben)"),
            ("config", "MAIL_PASSWORD=${MAIL_PASSWORD}\nAPI_KEY=<dein-api-key>"),
            ("prose", "Der Schlüssel zum Erfolg ist gute Vorbereitung."),
            ("prose", "Kleiderordnung beim Empfang: Dresscode Business."),
            ("chat", "Welche Postleitzahl hat das Büro in Köln?\n50667"),
            ("prose", "Code-Review für den Merge Request !214 steht noch aus."),
            ("prose", "Behoben in Commit %%sha%%."),
            ("prose", "Prüfsumme (SHA-256) der ISO-Datei: %%hash%%"),
            ("prose", "Rechnungsnummer %%inv%%, bitte auf das Konto IBAN %%iban%% überweisen."),
            ("prose", "Sendungsnummer: %%track%% – Zustellung voraussichtlich Dienstag."),
            (
                "prose",
                "Link zum Zurücksetzen des Passworts: https://konto.example.de/passwort-vergessen",
            ),
            ("prose", "PIN-Länge: 4 Ziffern, nach drei Fehlversuchen wird die Karte gesperrt."),
            ("prose", "Besprechung in Raum 3.014, Telefon +49 30 1234567, Beginn 14:30 Uhr."),
            ("prose", "Version 4.2.17 ist seit dem 12.11.2026 produktiv."),
            ("prose", "Vorgangs-ID %%uuid%% im Ticketsystem."),
            ("config", "Öffentlicher Schlüssel des Servers:\n%%pub%%"),
            ("prose", "Ich habe mein Passwort vergessen und den Reset angefordert."),
            ("prose", "Als kleines Zeichen der Anerkennung gab es Gutscheine."),
            ("prose", "Das Modell verarbeitet bis zu 200.000 Tokens pro Anfrage."),
            ("config", 'password: "{{ secret }}"\ntoken: "${GITLAB_TOKEN}"'),
        ],
    )
)
# --- fr ------------------------------------------------------------------------------------
ROWS.append(
    (
        "fr",
        [
            ("prose", "Le mot de passe du compte admin WordPress est %%pw%%, je le change lundi."),
            ("chat", "c'est quoi le code wifi chez toi ?\n%%pw%%"),
            ("chat", "Tu as le digicode de l'immeuble ?\noui, %%code%% puis la porte de gauche"),
            ("prose", "Le code de ma carte bleue est %%pin%%, ne le répète à personne."),
            (
                "prose",
                "Bonjour Claire,\n\nvoici les accès pour l'extranet :\nidentifiant : c.martin\n"
                "mot de passe : %%pw%%\n\nBien cordialement,\nThomas",
            ),
            (
                "table",
                "| Service | Identifiant | Mot de passe |\n|---|---|---|\n"
                "| Box Internet | admin | %%pw%% |",
            ),
            (
                "prose",
                "- serveur : sftp.cabinet-durand.fr\n- utilisateur : compta\n- mdp : %%rnd%%",
            ),
            ("prose", "Mot de passe :\n%%pw%%"),
            ("prose", "Le mot de passe est « %%pw%% » (attention aux majuscules)."),
            (
                "prose",
                "Compte rendu réunion du 5 décembre\n- migration vers Scaleway validée\n"
                "- clé API Stripe de prod : %%sklive%%\n- prochain point jeudi",
            ),
            (
                "config",
                "# fichier .env de "
                "l'appli\nDATABASE_URL=postgres://app:%%upw%%@localhost:5432/app\n",
            ),
            ("url", "Le flux est dispo sur https://admin:%%upw%%@cam-jardin.local:8443/video"),
            ("prose", "Code de l'alarme de la maison : %%code%%, on a 45 secondes pour le taper."),
            ("prose", "Le code du coffre de l'hôtel est %%pin%%."),
            ("prose", "Codes de secours pour la double authentification :\n%%recov%%"),
            (
                "config",
                "[smtp]\nhost = ssl0.ovh.net\nuser = contact@monsite.fr\npassword = %%upw%%\n",
            ),
            ("prose", "Le jeton GitHub de la CI est `%%ghp%%`, il expire dans 90 jours."),
            ("prose", "Phrase de passe du coffre KeePass : %%phrase%%"),
            ("chat", "Tu peux m'envoyer le token du bot Telegram ?\nle voilà : %%tg%%"),
            ("prose", "Clé privée du serveur de démo :\n%%pem%%"),
            ("prose", "Clé API Hugging Face pour les tests : %%hf%%"),
            ("config", '{\n  "apiKey": "%%aiza%%",\n  "projectId": "appli-resto"\n}'),
            ("prose", "En-tête à ajouter : Authorization: Bearer %%jwt%%"),
            ("prose", "Code de secours si je perds mon téléphone : %%bk%%"),
            ("prose", "Pour la Freebox, le mot de passe wifi c'est %%pw%%"),
            ("prose", "Le code portail de la résidence est %%code%%, le badge est en panne."),
            ("config", "machine ftp.hebergeur.fr\nlogin webmaster\npassword %%upw%%"),
            (
                "prose",
                "Identifiants du compte Ameli de papa : n° sécu dans le classeur, mot de passe "
                "%%pw%%",
            ),
        ],
        [
            (
                "prose",
                "Le mot de passe doit contenir au moins 12 caractères, dont un chiffre et un "
                "symbole.",
            ),
            ("prose", "Le mot de passe est dans Bitwarden, entrée « Cabinet / Extranet »."),
            ("prose", "Mot de passe : ******** (masqué)"),
            ("config", "DATABASE_PASSWORD=${DATABASE_PASSWORD}\nAPI_KEY=<votre-clé-api>"),
            ("prose", "La clé du succès, c'est la régularité."),
            ("prose", "Code vestimentaire : tenue correcte exigée."),
            ("chat", "Quel est le code postal de la mairie ?\n69003"),
            ("prose", "La revue de code de la branche feature/panier est prévue demain."),
            ("prose", "Corrigé dans le commit %%sha%%."),
            ("prose", "Somme de contrôle SHA-256 : %%hash%%"),
            ("prose", "Facture n° %%inv%% à régler par virement sur l'IBAN %%ibanfr%%."),
            ("prose", "Numéro de suivi Colissimo : %%track%%"),
            (
                "prose",
                "Lien de réinitialisation du mot de passe : "
                "https://compte.example.fr/reinitialiser",
            ),
            ("prose", "Longueur du code PIN : 4 chiffres."),
            ("prose", "Réunion salle 204, tél. 01 42 68 53 00, le 12/01/2027 à 9 h 30."),
            ("prose", "Version 3.11.2 déployée en production le 2 décembre."),
            ("prose", "Identifiant de la commande : %%uuid%%"),
            ("config", "Clé publique à ajouter dans authorized_keys :\n%%pub%%"),
            ("prose", "J'ai oublié mon mot de passe, je dois le réinitialiser ce soir."),
            ("prose", "Un petit cadeau en gage de reconnaissance pour toute l'équipe."),
            ("prose", "Le modèle accepte 128 000 jetons de contexte."),
            ("config", 'password: "{{ mot_de_passe }}"\ntoken: "votre-token-ici"'),
            ("prose", "Le code de la route a changé pour les trottinettes."),
            ("prose", "Prix : 49,90 € TTC, livraison le 15 janvier."),
            ("prose", "Logo en base64 : %%img%%"),
            (
                "prose",
                "Ne jamais envoyer de mot de passe par e-mail, utilisez le partage sécurisé.",
            ),
            ("prose", "Le digicode a été changé, demandez-le à la gardienne."),
            (
                "table",
                "| Champ | Valeur |\n|---|---|\n| Utilisateur | <identifiant> |\n"
                "| Mot de passe | <mot de passe> |",
            ),
        ],
    )
)

# --- es ------------------------------------------------------------------------------------
ROWS.append(
    (
        "es",
        [
            ("prose", "La contraseña del router es %%pw%%, está pegada debajo también."),
            ("chat", "¿cuál es la clave del wifi?\n%%pw%%"),
            ("prose", "El PIN de la tarjeta es %%pin%%."),
            (
                "prose",
                "Hola Lucía:\n\nte paso los accesos al panel:\nusuario: lgarcia\ncontraseña: "
                "%%pw%%\n"
                "\nUn saludo,\nPablo",
            ),
            (
                "table",
                "| Servicio | Usuario | Contraseña |\n|---|---|---|\n| Intranet | rrhh | %%pw%% |",
            ),
            ("prose", "- host: ftp.tienda.es\n- usuario: web\n- clave: %%rnd%%"),
            ("prose", "Contraseña:\n%%pw%%"),
            ("prose", "El código del portal es %%code%%."),
            ("prose", "Código de la alarma de la oficina: %%code%%"),
            ("config", "DB_PASSWORD=%%upw%%\nDB_HOST=10.0.0.12"),
            ("url", "mongodb+srv://admin:%%upw%%@cluster0.abcd1.mongodb.net/ventas"),
            (
                "prose",
                "Acta de la reunión del lunes\n- token de Slack para el bot: %%xoxb%%\n"
                "- revisar presupuesto",
            ),
            ("prose", "Códigos de recuperación de la cuenta:\n%%recov%%"),
            ("prose", "La clave API de OpenAI es `%%skproj%%`."),
            ("chat", "¿Me pasas el token de GitLab?\nclaro: %%glpat%%"),
            ("prose", "Frase de contraseña del gestor: %%phrase%%"),
            ("config", "spring.datasource.password=%%upw%%"),
            ("prose", "Clave privada del servidor:\n%%sshkey%%"),
            ("prose", 'La contraseña es "%%pw%%", sin espacios.'),
            ("prose", "Código de respaldo para la verificación en dos pasos: %%bk%%"),
            ("prose", "La caja fuerte del hotel se abre con %%pin%%."),
            ("prose", "Authorization: Bearer %%bearer%%"),
        ],
        [
            ("prose", "La contraseña debe tener al menos 12 caracteres."),
            ("prose", "La clave está guardada en 1Password, entrada «Oficina / Router»."),
            ("prose", "Contraseña: ******** (oculta)"),
            ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=tu-clave-aquí"),
            ("prose", "La clave del éxito es la constancia."),
            ("prose", "Código de vestimenta: informal."),
            ("chat", "¿cuál es el código postal de la oficina?\n28013"),
            ("prose", "La revisión de código del PR 77 está pendiente."),
            ("prose", "Arreglado en el commit %%sha%%."),
            ("prose", "Suma de verificación SHA-256: %%hash%%"),
            ("prose", "Número de pedido %%order%%, seguimiento %%track%%."),
            ("prose", "Factura %%inv%%, importe 1.250,00 €, vence el 30/01."),
            (
                "prose",
                "Enlace para restablecer la contraseña: https://cuenta.example.es/restablecer",
            ),
            ("prose", "Longitud del PIN: 6 dígitos."),
            ("prose", "Sala 2.07, teléfono +34 912 345 678, el 3 de marzo a las 10:00."),
            ("prose", "Versión 2.8.1 publicada ayer."),
            ("prose", "ID de la petición: %%uuid%%"),
            ("config", "Clave pública:\n%%pubpem%%"),
            ("prose", "Olvidé la contraseña otra vez, tengo que pedir una nueva."),
            ("prose", "Como muestra de agradecimiento, un vale regalo."),
            ("prose", "El modelo cobra por cada millón de tokens de entrada."),
            ("config", 'password: "{{ db_password }}"'),
        ],
    )
)
# --- it ------------------------------------------------------------------------------------
ROWS.append(
    (
        "it",
        [
            ("prose", "La password del gestionale è %%pw%%, mi raccomando non girarla."),
            ("chat", "qual è la password del wifi?\n%%pw%%"),
            ("chat", "mi ricordi il codice del cancello?\n%%code%%"),
            ("prose", "Il PIN del bancomat è %%pin%%."),
            (
                "prose",
                "Ciao Marco,\n\nti giro le credenziali di accesso al portale:\nutente: m.rossi\n"
                "password: %%pw%%\n\nA presto,\nGiulia",
            ),
            (
                "table",
                "| Servizio | Utente | Password |\n|---|---|---|\n| Modem | admin | %%pw%% |",
            ),
            ("prose", "- server: ftp.studiobianchi.it\n- utente: contabilita\n- pwd: %%rnd%%"),
            ("prose", "Password:\n%%pw%%"),
            ("prose", 'La parola d\'ordine è "%%pw%%".'),
            (
                "prose",
                "Verbale riunione del 4/12\n- token GitHub per il deploy: %%ghp%%\n- ferie da "
                "definire",
            ),
            ("config", "# .env\nDB_PASSWORD=%%upw%%\nDB_USER=gestionale"),
            ("url", "jdbc:postgresql://db.interno:5432/ordini?user=app&password=%%upw%%"),
            ("prose", "Il codice dell'allarme è %%code%%, poi premi OFF."),
            ("prose", "Codice della cassaforte in camera: %%pin%%"),
            ("prose", "Codici di recupero dell'account Google:\n%%recov%%"),
            (
                "config",
                "[mail]\nserver = smtps.aruba.it\nutente = info@negozio.it\npassword = %%upw%%",
            ),
            ("prose", "La chiave API di Stripe (live) è `%%sklive%%`."),
            ("prose", "Passphrase del portachiavi: %%phrase%%"),
            ("chat", "hai il token del bot?\neccolo: %%tg%%"),
            ("prose", "Chiave privata del server di test:\n%%pem%%"),
            ("prose", "Token di accesso Hugging Face: %%hf%%"),
            ("config", '{\n  "password": "%%upw%%",\n  "user": "admin"\n}'),
            ("prose", "Header: Authorization: Bearer %%jwt%%"),
            ("prose", "Codice di backup per l'autenticazione a due fattori: %%bk%%"),
            ("prose", "Il codice del portone è %%code%%, il citofono non funziona."),
            ("config", "machine api.fornitore.it\nlogin integrazione\npassword %%upw%%"),
            ("prose", "La chiave di accesso segreta AWS è %%awssec%%"),
            ("prose", "Per entrare nello SPID di nonna: password %%pw%%"),
        ],
        [
            ("prose", "La password deve avere almeno 12 caratteri e un numero."),
            ("prose", "La password è salvata in 1Password, voce «Studio / Modem»."),
            ("prose", "Password: ******** (nascosta)"),
            ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<la-tua-chiave>"),
            ("prose", "La chiave del successo è la costanza."),
            ("prose", "Dress code della cena: elegante."),
            ("chat", "qual è il CAP dell'ufficio di Bologna?\n40121"),
            ("prose", "La code review del branch fix/login è per domani."),
            ("prose", "Corretto nel commit %%sha%%."),
            ("prose", "Checksum SHA-256 del pacchetto: %%hash%%"),
            ("prose", "Fattura n. %%inv%%, ordine %%order%%."),
            ("prose", "Numero di tracciamento: %%track%%"),
            ("prose", "Link per reimpostare la password: https://account.example.it/reset"),
            ("prose", "Lunghezza del PIN: 5 cifre."),
            ("prose", "Sala riunioni 3B, tel. 02 1234 5678, il 7 gennaio alle 15."),
            ("prose", "Versione 1.14.3 rilasciata ieri."),
            ("prose", "ID richiesta: %%uuid%%"),
            ("config", "Chiave pubblica SSH:\n%%pub%%"),
            ("prose", "Ho dimenticato la password e ho chiesto il reset."),
            ("prose", "Un pensiero in segno di riconoscenza."),
            ("prose", "Il modello ha un contesto di 32.000 token."),
            ("config", 'password: "{{ vault_password }}"\ntoken: "il-tuo-token-qui"'),
            ("prose", "Il codice fiscale va inserito nel modulo, non il codice della carta."),
            ("prose", "Prezzo: 19,99 €, consegna il 12 dicembre."),
            ("prose", "Immagine incorporata: %%img%%"),
            ("prose", "Non mandate mai le password via WhatsApp."),
            ("prose", "Il codice del cancello è cambiato: chiedetelo al portiere."),
            (
                "table",
                "| Campo | Valore |\n|---|---|\n| Utente | <utente> |\n| Password | <password> |",
            ),
        ],
    )
)

# --- pt ------------------------------------------------------------------------------------
ROWS.append(
    (
        "pt",
        [
            ("prose", "A senha do roteador é %%pw%%, tá colada atrás dele também."),
            ("chat", "qual a senha do wi-fi?\n%%pw%%"),
            ("prose", "A senha do cartão é %%pin%%."),
            (
                "prose",
                "Olá Ana,\n\nseguem os dados de acesso ao sistema:\nusuário: ana.souza\n"
                "senha: %%pw%%\n\nAbraço,\nRafael",
            ),
            (
                "table",
                "| Serviço | Usuário | Senha |\n|---|---|---|\n| ERP | financeiro | %%pw%% |",
            ),
            ("prose", "- servidor: sftp.empresa.com.br\n- usuário: backup\n- senha: %%rnd%%"),
            ("prose", "Senha:\n%%pw%%"),
            ("prose", "O código do portão é %%code%%."),
            ("prose", "Código do alarme da loja: %%code%%"),
            ("config", "DATABASE_PASSWORD=%%upw%%\nDATABASE_HOST=10.1.2.3"),
            ("url", "amqp://fila:%%upw%%@rabbit.interno:5672/pedidos"),
            (
                "prose",
                "Ata da reunião de terça\n- chave da API do Google Maps: %%aiza%%\n- revisar "
                "contrato",
            ),
            ("prose", "Códigos de recuperação da conta:\n%%recov%%"),
            ("prose", "O token do GitHub é `%%ghpat%%`."),
            ("chat", "me passa a chave da Stripe?\n%%sklive%%"),
            ("prose", "Frase-senha do cofre: %%phrase%%"),
            ("config", "mail:\n  user: contato@loja.pt\n  password: '%%upw%%'"),
            ("prose", "Chave privada do servidor:\n%%pem%%"),
            ("prose", 'A senha é "%%pw%%", com letra maiúscula.'),
            ("prose", "Código de backup da verificação em duas etapas: %%bk%%"),
            ("prose", "O cofre do quarto abre com %%pin%%."),
            ("prose", "Token do bot do Telegram: %%tg%%"),
        ],
        [
            ("prose", "A senha precisa ter no mínimo 12 caracteres."),
            ("prose", 'A senha está no 1Password, item "Loja / ERP".'),
            ("prose", "Senha: ******** (oculta)"),
            ("config", "DATABASE_PASSWORD=${DATABASE_PASSWORD}\nAPI_KEY=sua-chave-aqui"),
            ("prose", "A chave do sucesso é a disciplina."),
            ("prose", "Código de vestimenta: esporte fino."),
            ("chat", "qual o CEP do escritório?\n01310-100"),
            ("prose", "A revisão de código do PR 31 ficou para amanhã."),
            ("prose", "Corrigido no commit %%sha%%."),
            ("prose", "Hash SHA-256 do arquivo: %%hash%%"),
            ("prose", "Pedido %%order%%, código de rastreio %%track%%."),
            ("prose", "Nota fiscal %%inv%%, valor R$ 1.299,00."),
            ("prose", "Link para redefinir a senha: https://conta.example.com.br/redefinir"),
            ("prose", "Tamanho do PIN: 4 dígitos."),
            ("prose", "Sala 502, telefone (11) 3456-7890, dia 10/02 às 14h."),
            ("prose", "Versão 5.0.2 em produção."),
            ("prose", "ID da transação: %%uuid%%"),
            ("config", "Chave pública:\n%%pub%%"),
            ("prose", "Esqueci a senha de novo, pedi para redefinir."),
            ("prose", "Em sinal de gratidão, um vale-presente para todos."),
            ("prose", "O limite é de 8 mil tokens por requisição."),
            ("config", 'senha: "{{ senha_db }}"'),
        ],
    )
)
# --- nl ------------------------------------------------------------------------------------
ROWS.append(
    (
        "nl",
        [
            ("prose", "Het wachtwoord van de NAS is %%pw%%, niet delen buiten het team."),
            ("chat", "wat is het wifi-wachtwoord hier?\n%%pw%%"),
            ("prose", "Mijn pincode is %%pin%%, voor als ik het weer vergeet."),
            (
                "prose",
                "Hoi Sanne,\n\nhierbij de inloggegevens voor het klantportaal:\n"
                "gebruikersnaam: s.devries\nwachtwoord: %%pw%%\n\nGroet,\nBram",
            ),
            (
                "table",
                "| Dienst | Gebruiker | Wachtwoord |\n|---|---|---|\n| Modem | admin | %%pw%% |",
            ),
            ("prose", "- host: sftp.boekhouder.nl\n- gebruiker: upload\n- ww: %%rnd%%"),
            ("prose", "Wachtwoord:\n%%pw%%"),
            ("prose", "De deurcode van de fietsenstalling is %%code%%."),
            ("prose", "Alarmcode kantoor: %%code%%"),
            ("config", "DB_PASSWORD=%%upw%%\nDB_NAME=webshop"),
            ("url", "redis://:%%upw%%@cache.intern:6379/2"),
            (
                "prose",
                "Notulen overleg 2 december\n- Slack-token voor de bot: %%xoxb%%\n"
                "- kerstborrel plannen",
            ),
            ("prose", "Herstelcodes voor het gedeelde account:\n%%recov%%"),
            ("prose", "De OpenAI-sleutel is `%%skproj%%`."),
            ("chat", "heb je de GitLab-token?\nja: %%glpat%%"),
            ("prose", "Wachtzin voor de kluis: %%phrase%%"),
            ("config", 'smtp:\n  gebruiker: info@bakkerij.nl\n  wachtwoord: "%%upw%%"'),
            ("prose", "Privésleutel van de testserver:\n%%sshkey%%"),
            ("prose", "Het wachtwoord is '%%pw%%'."),
            ("prose", "Back-upcode voor tweestapsverificatie: %%bk%%"),
            ("prose", "De kluis in de hotelkamer gaat open met %%pin%%."),
            ("prose", "API-sleutel npm publish: %%npm%%"),
        ],
        [
            ("prose", "Een wachtwoord moet minstens 12 tekens lang zijn."),
            ("prose", "Het wachtwoord staat in Bitwarden onder 'Kantoor / Modem'."),
            ("prose", "Wachtwoord: ******** (verborgen)"),
            ("config", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<jouw-sleutel>"),
            ("prose", "De sleutel tot succes is volhouden."),
            ("prose", "Dresscode op de bruiloft: tenue de ville."),
            ("chat", "wat is de postcode van het kantoor?\n1012 AB"),
            ("prose", "Codereview van PR 19 staat voor morgen."),
            ("prose", "Opgelost in commit %%sha%%."),
            ("prose", "SHA-256-controlesom: %%hash%%"),
            ("prose", "Bestelnummer %%order%%, track & trace %%track%%."),
            ("prose", "Factuurnummer %%inv%%, bedrag € 349,00."),
            ("prose", "Link om je wachtwoord te resetten: https://account.example.nl/reset"),
            ("prose", "Lengte pincode: 5 cijfers."),
            ("prose", "Vergaderruimte 4.12, tel. 020 123 4567, 9 januari om 10:00."),
            ("prose", "Versie 7.3.0 staat live."),
            ("prose", "Aanvraag-ID: %%uuid%%"),
            ("config", "Publieke sleutel:\n%%pub%%"),
            ("prose", "Ik ben mijn wachtwoord weer kwijt, reset aangevraagd."),
            ("prose", "Als blijk van waardering kreeg iedereen een bos bloemen."),
            ("prose", "Het model kan 100k tokens context aan."),
            ("config", 'wachtwoord: "{{ geheim }}"'),
        ],
    )
)

# --- ru ------------------------------------------------------------------------------------
ROWS.append(
    (
        "ru",
        [
            ("prose", "Пароль от админки сайта: %%pw%%, в пятницу поменяем."),
            ("chat", "какой пароль от вайфая?\n%%pw%%"),
            ("chat", "напомни код от домофона\n%%code%%"),
            ("prose", "ПИН-код от карты — %%pin%%."),
            (
                "prose",
                "Добрый день, Ирина!\n\nВысылаю доступы к личному кабинету:\nлогин: i.petrova\n"
                "пароль: %%pw%%\n\nС уважением,\nАлексей",
            ),
            ("table", "| Сервис | Логин | Пароль |\n|---|---|---|\n| Роутер | admin | %%pw%% |"),
            ("prose", "- сервер: sftp.buh-ooo.ru\n- пользователь: buh\n- пароль: %%rnd%%"),
            ("prose", "Пароль:\n%%pw%%"),
            ("prose", "Пароль это %%pw%%, без пробелов."),
            (
                "prose",
                "Протокол планёрки 3.12\n- токен GitHub для деплоя: %%ghp%%\n- отпуск согласовать",
            ),
            ("config", "# .env\nPOSTGRES_PASSWORD=%%upw%%\nPOSTGRES_USER=app"),
            ("url", "Строка подключения: postgresql://app:%%upw%%@10.0.5.7:5432/crm"),
            ("prose", "Код сигнализации на даче: %%code%%, потом кнопка «Снять»."),
            ("prose", "Код от сейфа в бухгалтерии — %%pin%%."),
            ("prose", "Резервные коды для входа:\n%%recov%%"),
            ("config", "[mail]\nhost = smtp.yandex.ru\nuser = info@firma.ru\npassword = %%upw%%"),
            ("prose", "API-ключ для Google Maps: `%%aiza%%`."),
            ("prose", "Кодовая фраза для менеджера паролей: %%phrase%%"),
            ("chat", "скинь токен бота\nдержи: %%tg%%"),
            ("prose", "Закрытый ключ сервера:\n%%pem%%"),
            ("prose", "Секретный ключ Stripe: %%sklive%%"),
            ("config", '{\n  "login": "admin",\n  "password": "%%upw%%"\n}'),
            ("prose", "Заголовок: Authorization: Bearer %%jwt%%"),
            ("prose", "Резервный код двухфакторной аутентификации: %%bk%%"),
            ("prose", "Код калитки — %%code%%."),
            ("config", "machine git.company.ru\nlogin ci\npassword %%hexkey%%"),
            ("prose", "Токен OpenAI для бота: %%skproj%%"),
            ("prose", "Пароль от Госуслуг мамы: %%pw%% (не забыть сменить)"),
        ],
        [
            ("prose", "Пароль должен быть не короче 12 символов и содержать цифру."),
            ("prose", "Пароль хранится в KeePass, запись «Бухгалтерия / Банк-клиент»."),
            ("prose", "Пароль: ******** (скрыт)"),
            ("config", "POSTGRES_PASSWORD=${POSTGRES_PASSWORD}\nAPI_KEY=<ваш-ключ>"),
            ("prose", "Ключ к успеху — это дисциплина."),
            ("prose", "Дресс-код на корпоративе: свободный."),
            ("chat", "какой почтовый индекс у офиса?\n190000"),
            ("prose", "Код-ревью по задаче CRM-412 назначено на завтра."),
            ("prose", "Исправлено в коммите %%sha%%."),
            ("prose", "Контрольная сумма SHA-256: %%hash%%"),
            ("prose", "Номер заказа %%order%%, трек-номер %%track%%."),
            ("prose", "Счёт № %%inv%% на сумму 12 500 ₽."),
            ("prose", "Ссылка для сброса пароля: https://lk.example.ru/reset"),
            ("prose", "Длина ПИН-кода: 4 цифры."),
            ("prose", "Переговорная 512, тел. +7 495 123-45-67, 15 января в 11:00."),
            ("prose", "Версия 2.4.9 выкачена в прод."),
            ("prose", "Идентификатор запроса: %%uuid%%"),
            ("config", "Открытый ключ:\n%%pub%%"),
            ("prose", "Я опять забыл пароль, пришлось восстанавливать через почту."),
            ("prose", "В знак благодарности команде подарили сертификаты."),
            ("prose", "Контекст модели — 128 тысяч токенов."),
            ("config", 'password: "{{ db_password }}"\ntoken: "ваш-токен"'),
            ("prose", "Исходный код лежит в репозитории, ссылка в вики."),
            ("prose", "Цена: 2 990 ₽, доставка 20 декабря."),
            ("prose", "Картинка: %%img%%"),
            ("prose", "Никогда не пересылайте пароли в Телеграме."),
            ("prose", "Код домофона поменяли, спросите у консьержа."),
            ("table", "| Поле | Значение |\n|---|---|\n| Логин | <логин> |\n| Пароль | <пароль> |"),
        ],
    )
)
