"""French labelled tidy-up set (issue 27), written blind before tuning."""

from __future__ import annotations

from tests.tidy.sets import Pair, Topic

PAIRS: list[Pair] = [
    # ------------------------------------------------------------------
    # Contradictions
    # ------------------------------------------------------------------
    Pair(
        id="fr-c-sauvegarde-heure",
        lang="fr",
        kind="clock",
        contradicts=True,
        a=(
            "La sauvegarde nocturne tourne à 2h00",
            "Le job de sauvegarde de la base principale est planifié dans la crontab à 2h00. "
            "Il dure une quarantaine de minutes.",
        ),
        b=(
            "Les backups démarrent chaque nuit à trois heures",
            "Heure de lancement des backups : 3 h du matin, pour ne pas gêner les batchs "
            "de fin de journée.",
        ),
    ),
    Pair(
        id="fr-c-logs-retention",
        lang="fr",
        kind="retention",
        contradicts=True,
        a=(
            "Les logs sont conservés 30 jours",
            "Dans Loki, on garde les journaux applicatifs pendant 30 jours, ensuite ils "
            "sont supprimés automatiquement.",
        ),
        b=(
            "La durée de rétention des journaux est de deux semaines",
            "Au-delà de deux semaines, les traces applicatives sont purgées pour limiter "
            "la facture de stockage.",
        ),
    ),
    Pair(
        id="fr-c-postgres-version",
        lang="fr",
        kind="version",
        contradicts=True,
        a=(
            "La base de prod tourne sous PostgreSQL 14",
            "Le serveur principal est en PostgreSQL 14.9, installé depuis les paquets "
            "officiels du PGDG.",
        ),
        b=(
            "Cluster principal en Postgres 16",
            "On a monté l'instance de production directement en PG 16 ; pg_trgm et "
            "postgis y sont activées.",
        ),
    ),
    Pair(
        id="fr-c-facturation-proprietaire",
        lang="fr",
        kind="name",
        contradicts=True,
        a=(
            "Le module de facturation appartient à l'équipe Paiements",
            "Toute modif du code de facturation doit être relue par quelqu'un de "
            "Paiements, ce sont eux les propriétaires.",
        ),
        b=(
            "C'est Finance Ops qui possède le service billing",
            "Le dépôt billing est maintenu par Finance Ops, les PR leur sont assignées d'office.",
        ),
    ),
    Pair(
        id="fr-c-region-prod",
        lang="fr",
        kind="name",
        contradicts=True,
        a=(
            "Prod hébergée en eu-west-3 (Paris)",
            "Tous les serveurs de production sont dans la région AWS de Paris.",
        ),
        b=(
            "L'infra de production vit à Francfort",
            "Nos instances prod ont été créées en eu-central-1, on n'a rien ailleurs "
            "pour l'instant.",
        ),
    ),
    Pair(
        id="fr-c-demo-client-jour",
        lang="fr",
        kind="weekday",
        contradicts=True,
        a=(
            "Les démos client ont lieu le jeudi",
            "Chaque jeudi à 16h, on montre au client ce qui a été terminé dans la semaine.",
        ),
        b=(
            "Point d'avancement avec le client le mardi",
            "Le mardi, le PO présente les nouveautés au client en visio. "
            "Ça ne dépasse jamais une demi-heure.",
        ),
    ),
    Pair(
        id="fr-c-piece-jointe-taille",
        lang="fr",
        kind="limit",
        contradicts=True,
        a=(
            "Taille max d'une pièce jointe uploadée : 10 Mo",
            "Le front bloque tout fichier de plus de 10 Mo et le backend renvoie une 413 au-delà.",
        ),
        b=(
            "Les utilisateurs peuvent joindre des fichiers jusqu'à 25 Mo",
            "On s'est alignés sur Gmail : 25 mégaoctets maximum par document envoyé dans l'appli.",
        ),
    ),
    Pair(
        id="fr-c-api-debit",
        lang="fr",
        kind="limit",
        contradicts=True,
        a=(
            "Quota de l'API publique : 100 requêtes par minute",
            "Chaque client authentifié a droit à 100 req/min ; au-delà on répond 429.",
        ),
        b=(
            "Pas plus de 5 appels par seconde sur l'API ouverte",
            "Le rate limiting coupe à 5 req/s par clé, soit 300 à la minute.",
        ),
    ),
    Pair(
        id="fr-c-ci-runners",
        lang="fr",
        kind="count",
        contradicts=True,
        a=(
            "La CI dispose de quatre runners",
            "Nous avons 4 runners GitLab auto-hébergés, tous sur la même machine physique.",
        ),
        b=(
            "Une douzaine de machines pour exécuter les pipelines",
            "Le parc d'agents d'intégration continue compte 12 VM, réparties sur deux "
            "hyperviseurs.",
        ),
    ),
    Pair(
        id="fr-c-2fa-admin",
        lang="fr",
        kind="yesno",
        contradicts=True,
        a=(
            "2FA obligatoire pour les comptes admin",
            "Tout compte avec des droits d'administration doit avoir la double "
            "authentification activée, sans exception.",
        ),
        b=(
            "Les administrateurs ne sont pas tenus d'activer un second facteur",
            "Pour les admins, l'OTP reste facultatif : on le recommande mais aucun "
            "blocage n'est en place.",
        ),
    ),
    Pair(
        id="fr-c-gel-date",
        lang="fr",
        kind="date",
        contradicts=True,
        a=(
            "Gel des livraisons à partir du 15/12/2025",
            "Plus aucune mise en prod après le 15/12/2025, sauf correctif critique "
            "validé par le CTO.",
        ),
        b=(
            "Code freeze de fin d'année le 20 décembre",
            "On arrête de déployer le 20 décembre pour les fêtes, reprise début janvier.",
        ),
    ),
    Pair(
        id="fr-c-emails-transac",
        lang="fr",
        kind="choice",
        contradicts=True,
        a=(
            "Les e-mails transactionnels partent via Sendgrid",
            "Confirmations de commande et réinitialisations de mot de passe passent par "
            "l'API Sendgrid.",
        ),
        b=(
            "Amazon SES pour les mails automatiques",
            "Les notifications envoyées par courriel aux utilisateurs sont émises avec SES.",
        ),
    ),
    Pair(
        id="fr-c-psp-timeout",
        lang="fr",
        kind="duration",
        contradicts=True,
        a=(
            "Timeout de 30 secondes vers le prestataire de paiement",
            "Les appels HTTP au PSP attendent jusqu'à 30 s avant d'abandonner.",
        ),
        b=(
            "Le client du PSP coupe au bout de 5 s",
            "Si le service de paiement ne répond pas en cinq secondes, la requête est "
            "annulée et l'utilisateur voit un message d'erreur.",
        ),
    ),
    Pair(
        id="fr-c-certificats-renouvellement",
        lang="fr",
        kind="duration",
        contradicts=True,
        a=(
            "Les certificats TLS sont renouvelés tous les 90 jours",
            "Let's Encrypt émet nos certificats, avec un renouvellement automatique "
            "tous les trois mois.",
        ),
        b=(
            "Renouvellement mensuel des certifs HTTPS",
            "Le cron certbot régénère les certificats du site une fois par mois.",
        ),
    ),
    Pair(
        id="fr-c-support-delai",
        lang="fr",
        kind="duration",
        contradicts=True,
        a=(
            "Première réponse au support sous 4 heures ouvrées",
            "Engagement contractuel : tout ticket client reçoit un premier retour en "
            "4 h ouvrées maximum.",
        ),
        b=(
            "Les clients doivent avoir un retour dans les 24 heures",
            "Notre SLA prévoit une réponse initiale en moins d'une journée, week-end compris.",
        ),
    ),
    Pair(
        id="fr-c-node-mobile",
        lang="fr",
        kind="version",
        contradicts=True,
        a=(
            "L'appli mobile se build avec Node 18",
            "Le projet React Native est figé sur Node 18 LTS ; ne pas monter plus haut, "
            "Metro casse.",
        ),
        b=(
            "Node 20 minimum pour l'app React Native",
            "Depuis la mise à jour d'Expo, il faut Node 20 ou plus pour compiler l'application.",
        ),
    ),
    Pair(
        id="fr-c-retro-jour",
        lang="fr",
        kind="weekday",
        contradicts=True,
        a=(
            "La rétro de sprint a lieu le vendredi matin",
            "On clôture chaque sprint par la rétrospective, le vendredi à 10h.",
        ),
        b=(
            "Rétrospective le lundi après le déjeuner",
            "On se retrouve le lundi à 14h pour faire le bilan de l'itération écoulée.",
        ),
    ),
    Pair(
        id="fr-c-bureau-lyon-samedi",
        lang="fr",
        kind="yesno",
        contradicts=True,
        a=(
            "Le bureau de Lyon est ouvert le samedi",
            "Les locaux lyonnais restent accessibles le samedi de 9h à 13h pour ceux "
            "qui veulent venir.",
        ),
        b=(
            "Personne ne peut entrer à Lyon le week-end",
            "L'alarme des bureaux de Lyon est armée du vendredi soir au lundi matin, "
            "aucun badge ne l'ouvre.",
        ),
    ),
    Pair(
        id="fr-c-session-inactivite",
        lang="fr",
        kind="duration",
        contradicts=True,
        a=(
            "Une session back-office expire après 30 minutes d'inactivité",
            "L'utilisateur du back-office est déconnecté au bout de 30 min sans action.",
        ),
        b=(
            "Déconnexion auto de l'admin au bout d'une heure",
            "Si personne ne touche à l'interface d'administration pendant une heure, "
            "on invalide le cookie.",
        ),
    ),
    Pair(
        id="fr-c-search-replicas",
        lang="fr",
        kind="count",
        contradicts=True,
        a=(
            "Le service de recherche tourne avec trois réplicas",
            "En prod, le déploiement search a 3 pods derrière le load balancer.",
        ),
        b=(
            "Cinq instances de search en production",
            "On fait tourner 5 copies du moteur pour tenir la charge du catalogue.",
        ),
    ),
    Pair(
        id="fr-c-etl-ventes-heure",
        lang="fr",
        kind="clock",
        contradicts=True,
        a=(
            "Le pipeline des ventes se lance tous les soirs à 22h30",
            "Le DAG d'agrégation des ventes est programmé chaque jour à 22h30.",
        ),
        b=(
            "Import quotidien des données commerciales à minuit",
            "Le chargement journalier du chiffre d'affaires dans l'entrepôt démarre à 0h00.",
        ),
    ),
    Pair(
        id="fr-c-factures-archive",
        lang="fr",
        kind="retention",
        contradicts=True,
        a=(
            "Les factures sont archivées dix ans",
            "Obligation légale : on conserve les PDF de factures pendant 10 ans sur du "
            "stockage froid.",
        ),
        b=(
            "Purge des anciennes factures au bout de cinq ans",
            "Un batch annuel supprime tout document de facturation émis il y a plus de 5 ans.",
        ),
    ),
    Pair(
        id="fr-c-outillage-langage",
        lang="fr",
        kind="choice",
        contradicts=True,
        a=(
            "Les scripts internes sont écrits en Python",
            "Pour l'outillage interne (petits CLI, scripts de migration), la règle est "
            "Python avec typer.",
        ),
        b=(
            "Outils d'équipe : on code en Go",
            "Les petits utilitaires maison se font en Go, pour avoir un binaire unique "
            "facile à distribuer.",
        ),
    ),
    Pair(
        id="fr-c-v3-date",
        lang="fr",
        kind="date",
        contradicts=True,
        a=(
            "La v3 de l'appli mobile sort le 3 mars",
            "Publication de la version 3 sur les stores prévue le 3 mars, avec un "
            "communiqué le même jour.",
        ),
        b=(
            "Lancement de la version 3 : 31/03/2025",
            "Le comité produit a fixé la sortie de la v3 mobile au 31/03/2025.",
        ),
    ),
    Pair(
        id="fr-c-poste-recrues",
        lang="fr",
        kind="name",
        contradicts=True,
        a=(
            "Les nouveaux arrivants reçoivent un MacBook Pro",
            "L'IT prépare un MacBook Pro 14 pouces pour chaque recrue, remis le premier jour.",
        ),
        b=(
            "Poste standard : ThinkPad sous Linux",
            "Le matériel fourni aux nouveaux est un Lenovo avec Ubuntu préinstallé.",
        ),
    ),
    Pair(
        id="fr-c-nas-quota",
        lang="fr",
        kind="limit",
        contradicts=True,
        a=(
            "Quota de 50 Go par personne sur le NAS",
            "Chaque collaborateur peut stocker 50 Go dans son dossier perso du NAS.",
        ),
        b=(
            "1,5 Go max par utilisateur sur le partage réseau",
            "Le serveur de fichiers limite l'espace individuel à 1,5 Go ; au-delà, "
            "l'écriture est refusée.",
        ),
    ),
    Pair(
        id="fr-c-astreinte-rotation",
        lang="fr",
        kind="duration",
        contradicts=True,
        a=(
            "L'astreinte tourne chaque semaine",
            "Le relais se fait le lundi à 10h, chacun garde le bip sept jours.",
        ),
        b=(
            "On reste d'astreinte quinze jours d'affilée",
            "Les tours de garde durent deux semaines pour limiter les passations.",
        ),
    ),
    # ------------------------------------------------------------------
    # Compatibles (hard negatives)
    # ------------------------------------------------------------------
    Pair(
        id="fr-ok-artefacts-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Les artefacts de build sont gardés deux semaines",
            "Passé ce délai, GitLab supprime automatiquement les artefacts des pipelines.",
        ),
        b=(
            "Rétention des artefacts CI : 14 jours",
            "expire_in est réglé à « 14 days » dans le .gitlab-ci.yml pour tous les jobs.",
        ),
    ),
    Pair(
        id="fr-ok-daily-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Le stand-up de l'équipe data est à 14h",
            "La moitié de l'équipe est à Montréal, donc le point quotidien se fait en "
            "début d'après-midi, 14h pile.",
        ),
        b=(
            "Daily data à deux heures de l'après-midi",
            "Quinze minutes max, caméra allumée si possible.",
        ),
    ),
    Pair(
        id="fr-ok-cache-tarifs-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Le cache des tarifs expire au bout d'une demi-heure",
            "Les prix fournisseurs sont donc rechargés au plus tard toutes les demi-heures.",
        ),
        b=(
            "TTL du cache de prix : 30 minutes",
            "Les clés Redis pricing:* ont une expiration de 1800 secondes.",
        ),
    ),
    Pair(
        id="fr-ok-image-docker-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "L'image Docker de l'API pèse environ 800 Mo",
            "Ça ralentit les déploiements ; un build multi-stage est à l'étude.",
        ),
        b=(
            "Image du backend : à peu près 0,8 Go",
            "Taille mesurée après le dernier build, surtout à cause des dépendances de ML.",
        ),
    ),
    Pair(
        id="fr-ok-sprint-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Nos sprints durent 15 jours",
            "Chaque itération commence un lundi et se termine le vendredi de la semaine suivante.",
        ),
        b=(
            "Le sprint fait deux semaines",
            "C'est le rythme adopté par toutes les équipes produit.",
        ),
    ),
    Pair(
        id="fr-ok-rapport-hebdo-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Le rapport hebdo est envoyé le lundi à 9h",
            "Il récapitule les incidents et les déploiements de la semaine précédente.",
        ),
        b=(
            "Reporting hebdomadaire par mail chaque lundi à neuf heures",
            "L'envoi est automatique, la liste de diffusion est gérée par le manager.",
        ),
    ),
    Pair(
        id="fr-ok-mdp-longueur-unites",
        lang="fr",
        kind="units",
        contradicts=False,
        a=(
            "Un mot de passe doit faire au moins douze caractères",
            "Le formulaire d'inscription refuse tout ce qui est plus court.",
        ),
        b=(
            "Longueur minimale des mots de passe : 12",
            "Règle appliquée côté API comme côté front.",
        ),
    ),
    Pair(
        id="fr-ok-niveau-log-env",
        lang="fr",
        kind="subject",
        contradicts=False,
        a=(
            "En préprod, le niveau de log est DEBUG",
            "On garde tout le détail pour pouvoir diagnostiquer les recettes.",
        ),
        b=(
            "La prod journalise en WARNING minimum",
            "Pas de DEBUG ni d'INFO en production, ça noie les vraies erreurs.",
        ),
    ),
    Pair(
        id="fr-ok-mobile-os-min",
        lang="fr",
        kind="subject",
        contradicts=False,
        a=(
            "L'appli iOS supporte iOS 15 et plus",
            "En dessous d'iOS 15, l'App Store ne propose plus la mise à jour.",
        ),
        b=(
            "Version minimale Android : 8.0 (API 26)",
            "Les téléphones sous Android 7 ne peuvent plus installer l'appli.",
        ),
    ),
    Pair(
        id="fr-ok-k8s-noeuds-env",
        lang="fr",
        kind="subject",
        contradicts=False,
        a=(
            "Le cluster de staging a 2 nœuds",
            "Deux machines suffisent en staging, l'autoscaling y est désactivé.",
        ),
        b=(
            "Six nœuds dans le cluster Kubernetes de prod",
            "Le cluster de production compte 6 workers de 16 vCPU chacun.",
        ),
    ),
    Pair(
        id="fr-ok-bureaux-horaires",
        lang="fr",
        kind="subject",
        contradicts=False,
        a=(
            "Le bureau de Nantes ouvre à 8h",
            "Le premier arrivé désactive l'alarme avec son badge.",
        ),
        b=(
            "Les locaux de Bordeaux ouvrent à 9h",
            "Avant 9h, l'accueil de l'immeuble est fermé et les badges ne marchent pas.",
        ),
    ),
    Pair(
        id="fr-ok-delai-paiement-clients",
        lang="fr",
        kind="subject",
        contradicts=False,
        a=(
            "Les factures B2B sont payables à 30 jours",
            "Pour les clients entreprises, l'échéance est à 30 jours fin de mois.",
        ),
        b=(
            "Les particuliers paient à la commande",
            "Côté B2C, le paiement par carte est exigé avant l'expédition.",
        ),
    ),
    Pair(
        id="fr-ok-redis-sessions-attribut",
        lang="fr",
        kind="attribute",
        contradicts=False,
        a=(
            "Le Redis des sessions a 4 Go de RAM",
            "Instance ElastiCache largement dimensionnée pour l'instant.",
        ),
        b=(
            "Redis sessions en version 7.2",
            "Mis à jour le mois dernier, aucun changement n'a été nécessaire côté appli.",
        ),
    ),
    Pair(
        id="fr-ok-dumps-crm-attribut",
        lang="fr",
        kind="attribute",
        contradicts=False,
        a=(
            "Les dumps de la base CRM sont chiffrés en AES-256",
            "La clé est gérée par le KMS, jamais stockée à côté des fichiers.",
        ),
        b=(
            "Les dumps du CRM sont stockés chez OVH à Gravelines",
            "Bucket Object Storage dédié, distinct de l'hébergement principal.",
        ),
    ),
    Pair(
        id="fr-ok-api-recherche-attribut",
        lang="fr",
        kind="attribute",
        contradicts=False,
        a=(
            "L'API de recherche répond en 200 ms au p95",
            "Mesuré sur Grafana sur les trente derniers jours.",
        ),
        b=(
            "L'API de recherche encaisse 300 requêtes par seconde en pointe",
            "Le pic arrive le dimanche soir, quand les gens préparent leurs courses.",
        ),
    ),
    Pair(
        id="fr-ok-machine-build-attribut",
        lang="fr",
        kind="attribute",
        contradicts=False,
        a=(
            "La machine de build a 32 cœurs",
            "Un Threadripper dédié, installé dans la baie du sous-sol.",
        ),
        b=(
            "Le serveur de build a été acheté il y a trois ans",
            "La garantie constructeur a expiré, il faudra le remplacer en 2026.",
        ),
    ),
    Pair(
        id="fr-ok-mep-historique",
        lang="fr",
        kind="history",
        contradicts=False,
        a=(
            "Avant on livrait le vendredi, maintenant c'est le mardi",
            "On a arrêté les mises en prod du vendredi après deux week-ends gâchés par "
            "des incidents.",
        ),
        b=(
            "Les mises en prod se font le mardi",
            "Créneau de livraison : mardi matin, l'astreinte est prévenue la veille.",
        ),
    ),
    Pair(
        id="fr-ok-tickets-historique",
        lang="fr",
        kind="history",
        contradicts=False,
        a=(
            "On est passés de Jira à Linear en janvier",
            "Les anciens tickets Jira restent consultables en lecture seule.",
        ),
        b=(
            "Les tickets de l'équipe sont suivis dans Linear",
            "Un cycle Linear correspond à un sprint.",
        ),
    ),
    Pair(
        id="fr-ok-python-historique",
        lang="fr",
        kind="history",
        contradicts=False,
        a=(
            "Migration de Python 3.9 à 3.12 terminée le mois dernier",
            "Il a fallu remplacer deux dépendances qui ne suivaient plus.",
        ),
        b=(
            "Le backend tourne en Python 3.12",
            "Les images de base sont python:3.12-slim.",
        ),
    ),
    Pair(
        id="fr-ok-astreinte-remuneration-historique",
        lang="fr",
        kind="history",
        contradicts=False,
        a=(
            "L'astreinte était payée au forfait jusqu'en 2024",
            "Depuis l'accord de janvier, on est passés à une rémunération à l'heure "
            "d'intervention.",
        ),
        b=(
            "L'astreinte est rémunérée à l'heure",
            "Chaque intervention est déclarée dans l'outil RH avec sa durée.",
        ),
    ),
    Pair(
        id="fr-ok-worker-emails-plage",
        lang="fr",
        kind="range",
        contradicts=False,
        a=(
            "L'autoscaler du worker d'emails garde entre 1 et 3 réplicas",
            "Le HPA se base sur la longueur de la file.",
        ),
        b=(
            "Le worker d'emails a 2 réplicas en ce moment",
            "Constaté ce matin avec kubectl, la file est un peu chargée.",
        ),
    ),
    Pair(
        id="fr-ok-duree-build-plage",
        lang="fr",
        kind="range",
        contradicts=False,
        a=(
            "Le build doit rester sous les 10 minutes",
            "Au-delà, on considère que c'est une régression à traiter en priorité.",
        ),
        b=(
            "Le build complet prend en moyenne 7 minutes",
            "Moyenne calculée sur les 200 derniers pipelines de main.",
        ),
    ),
    Pair(
        id="fr-ok-pool-connexions-plage",
        lang="fr",
        kind="range",
        contradicts=False,
        a=(
            "Le pool de connexions à la base varie entre 10 et 50",
            "min_size=10, max_size=50 dans la config de l'API.",
        ),
        b=(
            "Environ 25 connexions ouvertes en régime normal",
            "C'est ce que montre pg_stat_activity pour l'utilisateur de l'API en journée.",
        ),
    ),
    Pair(
        id="fr-ok-salle-serveur-temperature-plage",
        lang="fr",
        kind="range",
        contradicts=False,
        a=(
            "La salle serveur doit rester entre 18 et 24 °C",
            "Une alerte part vers les services généraux si on sort de cette plage.",
        ),
        b=(
            "Le thermomètre de la baie affiche 21 degrés",
            "Relevé fait lundi après le remplacement de la clim.",
        ),
    ),
    Pair(
        id="fr-ok-vault-elaboration",
        lang="fr",
        kind="elaboration",
        contradicts=False,
        a=(
            "Les clés API sont stockées dans Vault",
            "Rien dans le dépôt ni dans les variables de CI.",
        ),
        b=(
            "Secrets applicatifs dans HashiCorp Vault, sous kv/prod",
            "Les clés d'API tierces y sont rangées par service. Les applis y accèdent "
            "via un rôle AppRole, renouvelé à chaque déploiement.",
        ),
    ),
    Pair(
        id="fr-ok-support-n2-elaboration",
        lang="fr",
        kind="elaboration",
        contradicts=False,
        a=(
            "Le support niveau 2 est géré par l'équipe plateforme",
            "Le N1 escalade vers eux quand le problème est technique.",
        ),
        b=(
            "Les tickets N2 arrivent à l'équipe plateforme via Zendesk",
            "Une vue Zendesk dédiée leur est assignée. Si c'est bloquant pour un client, "
            "ils peuvent réveiller l'astreinte.",
        ),
    ),
    Pair(
        id="fr-ok-webhooks-stripe-elaboration",
        lang="fr",
        kind="elaboration",
        contradicts=False,
        a=(
            "Les webhooks Stripe sont vérifiés",
            "On ne traite aucun événement dont la signature est invalide.",
        ),
        b=(
            "Vérification de signature sur chaque webhook Stripe",
            "On contrôle l'en-tête Stripe-Signature avec le secret d'endpoint, et on "
            "rejette aussi les événements vieux de plus de 5 minutes pour éviter le rejeu.",
        ),
    ),
    Pair(
        id="fr-ok-revue-code-restated",
        lang="fr",
        kind="restated",
        contradicts=False,
        a=(
            "Pas de merge sans revue de code",
            "La branche main est protégée en conséquence.",
        ),
        b=(
            "Toute PR doit être approuvée par un relecteur avant fusion",
            "GitLab bloque le bouton de merge tant qu'il n'y a pas d'approbation.",
        ),
    ),
    Pair(
        id="fr-ok-alembic-restated",
        lang="fr",
        kind="restated",
        contradicts=False,
        a=(
            "Les migrations de schéma passent par Alembic",
            "Une révision par changement, relue comme le reste du code.",
        ),
        b=(
            "On fait évoluer le schéma SQL uniquement avec Alembic",
            "Jamais de ALTER TABLE à la main sur une base partagée.",
        ),
    ),
    Pair(
        id="fr-ok-notes-frais-restated",
        lang="fr",
        kind="restated",
        contradicts=False,
        a=(
            "Notes de frais via Expensya",
            "Photographier le justificatif dans l'appli et soumettre avant le 5 du mois suivant.",
        ),
        b=(
            "Les dépenses pro se déclarent dans Expensya",
            "Aucun remboursement sur papier, tout passe par la plateforme avec le reçu.",
        ),
    ),
]

TOPICS: list[Topic] = [
    # ------------------------------------------------------------------
    # Même sujet : à fusionner
    # ------------------------------------------------------------------
    Topic(
        id="fr-t-preprod-ci-verte",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les déploiements en préprod exigent une pipeline verte",
                "Si un job est rouge, le déploiement vers la préprod est bloqué.",
            ),
            (
                "Rien ne part en staging sans CI au vert",
                "Même pour un petit correctif, on attend que tous les tests passent.",
            ),
            (
                "La CI doit passer avant toute mise en préprod",
                "Règle d'équipe, pas d'exception pour les hotfix.",
            ),
        ),
    ),
    Topic(
        id="fr-t-schema-vendredi",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Ne jamais lancer de migration en prod un vendredi",
                "Si ça casse, personne n'a envie de réparer le week-end.",
            ),
            (
                "Modifs de schéma de la base de production proscrites le vendredi",
                "Les changements de structure SQL attendent le début de semaine suivante.",
            ),
        ),
    ),
    Topic(
        id="fr-t-argon2",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les mots de passe sont hachés avec Argon2",
                "Paramètres par défaut de argon2-cffi.",
            ),
            (
                "Stockage des identifiants : on s'appuie sur Argon2id",
                "Aucun secret utilisateur n'est conservé en clair ni en MD5.",
            ),
            (
                "Hash des credentials en Argon2",
                "C'est la seule fonction de dérivation autorisée pour les comptes clients.",
            ),
        ),
    ),
    Topic(
        id="fr-t-teletravail-mobile-mercredi",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "L'équipe mobile bosse en télétravail le mercredi",
                "Pas de réunion en présentiel ce jour-là.",
            ),
            (
                "Le mercredi, les devs de l'appli sont tous à la maison",
                "Inutile de réserver une salle pour eux en milieu de semaine.",
            ),
        ),
    ),
    Topic(
        id="fr-t-pagerduty-p1",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les alertes critiques réveillent l'astreinte via PagerDuty",
                "Les alertes de sévérité critique déclenchent un appel téléphonique.",
            ),
            (
                "Incident P1 : PagerDuty appelle la personne de garde",
                "Même en pleine nuit, c'est le téléphone qui sonne, pas juste Slack.",
            ),
        ),
    ),
    Topic(
        id="fr-t-horodatages-utc",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les dates sont stockées en UTC en base",
                "La conversion vers l'heure de Paris se fait à l'affichage.",
            ),
            (
                "Tous les horodatages persistés sont en temps universel",
                "Colonnes timestamptz partout.",
            ),
            (
                "Aucun fuseau local dans la DB",
                "Ce qu'on écrit dans les tables est toujours en UTC, le front s'occupe du reste.",
            ),
        ),
    ),
    Topic(
        id="fr-t-avoirs-validation",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les remboursements au-delà de 500 € nécessitent l'accord d'un manager",
                "Le support ne peut pas les valider seul.",
            ),
            (
                "Un responsable doit approuver tout avoir supérieur à 500 euros",
                "Sinon la demande reste en attente dans le back-office.",
            ),
        ),
    ),
    Topic(
        id="fr-t-semver",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Le numéro de version suit SemVer",
                "Une rupture d'API implique une version majeure.",
            ),
            (
                "On incrémente majeur.mineur.correctif selon le versionnage sémantique",
                "Un correctif de bug ne touche que le dernier chiffre.",
            ),
        ),
    ),
    Topic(
        id="fr-t-logs-json",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les logs applicatifs sont au format JSON",
                "Ça permet de les indexer sans parsing maison.",
            ),
            (
                "Chaque ligne émise par nos services est un objet structuré",
                "structlog sérialise tout en JSON, un événement par ligne.",
            ),
        ),
    ),
    Topic(
        id="fr-t-badge-datacenter",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Le badge d'accès au datacenter s'obtient auprès de la sécurité",
                "Prévoir une pièce d'identité.",
            ),
            (
                "Pour entrer dans la salle des machines chez l'hébergeur, demander une "
                "carte au service sûreté",
                "Ils la délivrent sur présentation d'un papier d'identité.",
            ),
        ),
    ),
    Topic(
        id="fr-t-staging-reset",
        lang="fr",
        kind="duplicate",
        same=True,
        notes=(
            (
                "Le staging est remis à zéro chaque dimanche",
                "Les données de test sont rechargées depuis les fixtures.",
            ),
            (
                "Staging réinitialisé tous les dimanches",
                "Données rechargées depuis les fixtures.",
            ),
        ),
    ),
    Topic(
        id="fr-t-linter-ruff",
        lang="fr",
        kind="duplicate",
        same=True,
        notes=(
            ("Le linter est ruff", "Lancé en pre-commit et dans la CI."),
            ("On utilise ruff comme linter Python", "Il tourne en pre-commit et en CI."),
        ),
    ),
    Topic(
        id="fr-t-feature-flags-unleash",
        lang="fr",
        kind="duplicate",
        same=True,
        notes=(
            (
                "Les feature flags sont gérés dans Unleash",
                "Instance auto-hébergée, accès via le SSO.",
            ),
            ("Feature flags : Unleash", "Auto-hébergé, connexion par SSO."),
            (
                "Les feature flags sont gérés dans Unleash",
                "Instance auto-hébergée, on s'y connecte avec le SSO.",
            ),
        ),
    ),
    Topic(
        id="fr-t-rgpd-donnees-ue",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Les données personnelles des clients européens restent dans l'UE",
                "Aucun sous-traitant hors UE pour ces données.",
            ),
            (
                "Interdit de transférer hors de l'Union les infos perso de nos clients européens",
                "Exigence RGPD reprise dans nos contrats.",
            ),
        ),
    ),
    Topic(
        id="fr-t-wifi-invites",
        lang="fr",
        kind="duplicate",
        same=True,
        notes=(
            (
                "Le mot de passe du Wi-Fi invités est affiché à l'accueil",
                "Il change tous les mois.",
            ),
            ("Mdp du wifi invité : voir l'affiche à l'accueil", "Changé chaque mois."),
        ),
    ),
    Topic(
        id="fr-t-taille-pr",
        lang="fr",
        kind="paraphrase",
        same=True,
        notes=(
            (
                "Une pull request ne doit pas dépasser 400 lignes modifiées",
                "Au-delà, la relecture devient superficielle.",
            ),
            (
                "Au-delà de 400 lignes de diff, découper",
                "Plusieurs petites MR valent mieux qu'une énorme.",
            ),
            (
                "Les changements sont livrés par petits morceaux, 400 lignes au maximum",
                "Le bot signale les demandes de fusion trop grosses.",
            ),
        ),
    ),
    # ------------------------------------------------------------------
    # À garder séparés
    # ------------------------------------------------------------------
    Topic(
        id="fr-t-cache-purge",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Le cache CDN des assets statiques est purgé à chaque déploiement",
                "Cloudflare est appelé en fin de pipeline pour invalider /static/*.",
            ),
            (
                "Le cache npm de la CI est invalidé quand package-lock change",
                "La clé de cache est le hash du lockfile.",
            ),
        ),
    ),
    Topic(
        id="fr-t-tokens-expiration",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Le token d'accès OAuth a une durée de vie de 15 minutes",
                "Le front le rafraîchit avec le refresh token.",
            ),
            (
                "Le token GitHub utilisé par la CI expire fin juin",
                "Penser à le régénérer avant, sinon le mirroring des dépôts s'arrête.",
            ),
        ),
    ),
    Topic(
        id="fr-t-files-attente",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "La file de messages des commandes utilise RabbitMQ",
                "Exchange orders, une queue par consommateur.",
            ),
            (
                "La file d'attente du support téléphonique est gérée par Aircall",
                "Au-delà de 5 minutes d'attente, l'appel bascule sur la messagerie.",
            ),
        ),
    ),
    Topic(
        id="fr-t-rapports-mensuels",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Le rapport mensuel de facturation est envoyé au DAF",
                "Export généré le 2 de chaque mois par la compta.",
            ),
            (
                "Le rapport mensuel des incidents est publié sur Confluence",
                "L'équipe SRE le rédige et le présente en comité technique.",
            ),
        ),
    ),
    Topic(
        id="fr-t-migrations-projets",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Migration de la base analytics vers BigQuery",
                "Les tables historiques sont copiées, les dashboards suivront.",
            ),
            (
                "Migration des utilisateurs vers le nouveau SSO",
                "Chaque compte doit se reconnecter une fois via Okta pour être migré.",
            ),
        ),
    ),
    Topic(
        id="fr-t-rotation-cles",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Rotation de la clé SSH du bastion chaque trimestre",
                "Les anciennes clés sont révoquées le jour même.",
            ),
            (
                "Rotation annuelle de la clé KMS des sauvegardes",
                "AWS gère la rotation automatique, on vérifie juste qu'elle est activée.",
            ),
        ),
    ),
    Topic(
        id="fr-t-exports-csv",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "L'export CSV des commandes est limité à 10 000 lignes",
                "Pour plus, il faut passer par l'export asynchrone.",
            ),
            (
                "L'export CSV comptable utilise le point-virgule comme séparateur",
                "Le logiciel du cabinet comptable ne lit pas les virgules.",
            ),
        ),
    ),
    Topic(
        id="fr-t-release-mobile",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            (
                "Les releases mobiles sont publiées en déploiement progressif",
                "10 %, puis 50 %, puis 100 % des utilisateurs sur trois jours.",
            ),
            (
                "Chaque release mobile est validée par la QA sur de vrais appareils",
                "Un iPhone et deux Android de gamme différente au minimum.",
            ),
            (
                "Les notes de version de l'appli sont rédigées par le PO",
                "En français et en anglais, relues par le marketing.",
            ),
        ),
    ),
    Topic(
        id="fr-t-onboarding",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            (
                "Un nouvel arrivant a un parrain pendant son premier mois",
                "Le parrain est choisi dans une autre équipe que la sienne.",
            ),
            (
                "Le compte Google Workspace est créé par l'IT la veille de l'arrivée",
                "Le manager doit faire la demande au moins une semaine avant.",
            ),
        ),
    ),
    Topic(
        id="fr-t-kafka",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            ("Le cluster Kafka a 3 brokers", "Facteur de réplication 3 sur tous les topics."),
            (
                "Convention de nommage des topics Kafka : domaine.entite.evenement",
                "Par exemple commandes.panier.valide.",
            ),
            (
                "Kafka est supervisé dans Grafana",
                "Le lag des consommateurs a son propre tableau de bord.",
            ),
        ),
    ),
    Topic(
        id="fr-t-post-mortem",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            (
                "Tout incident P1 donne lieu à un post-mortem sous 5 jours ouvrés",
                "Le responsable de l'incident en est l'auteur.",
            ),
            (
                "Les post-mortems sont sans reproche",
                "On cherche les causes dans le système, pas de coupable nommé.",
            ),
        ),
    ),
    Topic(
        id="fr-t-port-8080",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "L'API d'administration écoute sur le port 8080",
                "Elle n'est exposée que sur le réseau privé.",
            ),
            (
                "Le port 8080 est bloqué par le pare-feu du bureau",
                "Pour tester un serveur local depuis un autre poste, utiliser un autre port.",
            ),
        ),
    ),
    Topic(
        id="fr-t-salle-everest",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            (
                "La salle Everest a un écran 75 pouces",
                "Le câble HDMI est dans le tiroir de la table.",
            ),
            (
                "La salle Everest se réserve via Google Agenda",
                "Elle accueille douze personnes au maximum.",
            ),
        ),
    ),
    Topic(
        id="fr-t-seuils-80",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "Le seuil d'alerte disque est à 80 %",
                "Au-dessus, Alertmanager poste dans #ops.",
            ),
            (
                "Le seuil de couverture de tests est fixé à 80 %",
                "La CI échoue si la couverture passe en dessous.",
            ),
        ),
    ),
    Topic(
        id="fr-t-clickstream",
        lang="fr",
        kind="complementary",
        same=False,
        notes=(
            (
                "Le pipeline clickstream écrit en Parquet partitionné par jour",
                "Un dossier par date dans le bucket du lac de données.",
            ),
            (
                "Le pipeline clickstream est orchestré par Airflow",
                "Un DAG par source, avec des reprises automatiques.",
            ),
            (
                "Les données clickstream sont anonymisées avant chargement",
                "Les adresses IP sont tronquées et les identifiants hachés.",
            ),
        ),
    ),
    Topic(
        id="fr-t-periodes-essai",
        lang="fr",
        kind="samewords",
        same=False,
        notes=(
            (
                "La version d'essai du SaaS dure 14 jours",
                "Sans carte bancaire, toutes les fonctionnalités incluses.",
            ),
            (
                "La période d'essai des nouveaux salariés est de quatre mois",
                "Renouvelable une fois pour les cadres.",
            ),
        ),
    ),
]
