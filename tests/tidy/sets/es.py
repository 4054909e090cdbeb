"""Spanish labelled tidy-up set (issue 27), written blind before tuning."""

from __future__ import annotations

from tests.tidy.sets import Pair, Topic

PAIRS: list[Pair] = [
    # ---------------------------------------------------------------- contradicen
    Pair(
        "es-c-copia-hora",
        "es",
        "clock",
        True,
        (
            "La copia de seguridad nocturna corre a las 2:00",
            "El cron de respaldo de la base de clientes se lanza a las 2:00 (hora de Madrid). "
            "Si tarda más de una hora salta un aviso en el canal de operaciones.",
        ),
        (
            "Backups: arrancan cada noche a las tres",
            "Hemos comprobado en el panel del proveedor que el volcado empieza a las tres de "
            "la madrugada y suele acabar antes de las cuatro.",
        ),
    ),
    Pair(
        "es-c-logs-retencion",
        "es",
        "retention",
        True,
        (
            "Los logs de la aplicación se guardan 30 días",
            "Loki borra automáticamente todo lo que tenga más de 30 días; para investigar "
            "algo más antiguo hay que pedirlo antes.",
        ),
        (
            "Retención de registros: dos semanas",
            "Pasadas dos semanas, los registros desaparecen del sistema centralizado, así que "
            "conviene exportar lo que haga falta para un postmortem.",
        ),
    ),
    Pair(
        "es-c-postgres-version",
        "es",
        "version",
        True,
        (
            "La base principal corre PostgreSQL 15",
            "Actualizamos el clúster de producción a la 15 el año pasado; las extensiones "
            "pgcrypto y pg_trgm ya están instaladas.",
        ),
        (
            "Producción sigue en Postgres 13",
            "Ojo con usar funciones nuevas en las consultas: el servidor de prod es todavía "
            "un 13.x y no soporta MERGE.",
        ),
    ),
    Pair(
        "es-c-facturacion-dueno",
        "es",
        "name",
        True,
        (
            "El servicio de facturación es del equipo de Pagos",
            "Cualquier cambio en facturación lo revisa y lo aprueba Pagos; ellos llevan "
            "también sus alertas.",
        ),
        (
            "Quién mantiene billing: Core",
            "El responsable del módulo de cobros y facturas es el equipo Core, según el "
            "último reparto de servicios de enero.",
        ),
    ),
    Pair(
        "es-c-adjuntos-limite",
        "es",
        "limit",
        True,
        (
            "Los adjuntos pueden pesar como máximo 10 MB",
            "El formulario de tickets rechaza cualquier archivo de más de 10 MB y devuelve un 413.",
        ),
        (
            "Tope de subida de ficheros: 25 megas",
            "Subimos el límite en nginx y en el backend para que los clientes puedan mandar "
            "vídeos cortos; ahora se aceptan hasta 25 megas por fichero.",
        ),
    ),
    Pair(
        "es-c-app-dia-release",
        "es",
        "weekday",
        True,
        (
            "Las releases de la app móvil salen los jueves",
            "Cada jueves por la mañana se envía la build a las tiendas para que la revisión "
            "de Apple no caiga en fin de semana.",
        ),
        (
            "Publicamos nueva versión del móvil cada lunes",
            "El tren de publicación de iOS y Android arranca el lunes; lo que no esté "
            "mezclado el domingo espera a la semana siguiente.",
        ),
    ),
    Pair(
        "es-c-sesion-admin",
        "es",
        "duration",
        True,
        (
            "La sesión del panel de administración caduca a la media hora",
            "Si un admin no hace nada durante media hora, se le cierra la sesión y tiene "
            "que volver a entrar con 2FA.",
        ),
        (
            "Tokens de admin: 8 horas de vida",
            "Los JWT que emite el backoffice duran una jornada entera, 8 h, para no "
            "molestar al equipo de operaciones.",
        ),
    ),
    Pair(
        "es-c-api-replicas",
        "es",
        "count",
        True,
        (
            "La API corre con tres réplicas en producción",
            "El deployment de la API pública tiene replicas: 3 fijas, sin autoscaling.",
        ),
        (
            "En prod hay cinco pods del backend de la API",
            "Lo he mirado con kubectl: cinco pods del api-server, todos en Running.",
        ),
    ),
    Pair(
        "es-c-region-prod",
        "es",
        "name",
        True,
        (
            "Los servidores de producción están en eu-west-1",
            "Todo lo de prod vive en Irlanda; las latencias desde Latinoamérica rondan los 180 ms.",
        ),
        (
            "Producción: Frankfurt",
            "La infraestructura productiva está desplegada en eu-central-1, con copias "
            "cifradas en otra zona de la misma región.",
        ),
    ),
    Pair(
        "es-c-github-2fa",
        "es",
        "yesno",
        True,
        (
            "El 2FA es obligatorio en la organización de GitHub",
            "Quien no tenga activado el segundo factor pierde el acceso a los repos "
            "automáticamente.",
        ),
        (
            "GitHub: doble factor opcional",
            "No lo exigimos a nivel de organización; cada persona decide si lo activa en "
            "su cuenta.",
        ),
    ),
    Pair(
        "es-c-cola-mensajes",
        "es",
        "choice",
        True,
        (
            "La cola de mensajes entre servicios es RabbitMQ",
            "Pedidos, inventario y notificaciones se comunican publicando en exchanges de "
            "RabbitMQ.",
        ),
        (
            "Los eventos internos viajan por Kafka",
            "Para la comunicación asíncrona entre microservicios usamos Kafka; cada "
            "dominio tiene sus topics.",
        ),
    ),
    Pair(
        "es-c-freeze-fecha",
        "es",
        "date",
        True,
        (
            "El code freeze de la 4.0 es el 31/03/2025",
            "A partir de esa fecha solo entran correcciones de bugs en la rama release/4.0.",
        ),
        (
            "Congelamos el código el 14 de abril",
            "Producto ha confirmado que la congelación para la versión 4.0 será el 14 de "
            "abril; hasta entonces se pueden mezclar features.",
        ),
    ),
    Pair(
        "es-c-rate-limit",
        "es",
        "limit",
        True,
        (
            "La API pública admite 100 peticiones por minuto por clave",
            "Al pasar de 100 req/min, el gateway devuelve 429 con la cabecera Retry-After.",
        ),
        (
            "Rate limit de la API externa: 60 llamadas/minuto",
            "Cada API key de cliente está limitada a sesenta peticiones por minuto; los "
            "partners grandes piden ampliación por soporte.",
        ),
    ),
    Pair(
        "es-c-node-version",
        "es",
        "version",
        True,
        (
            "El frontend compila con Node 18",
            "El .nvmrc del repo web fija la 18 y la imagen de build usa node:18-alpine.",
        ),
        (
            "La web se construye con Node 20",
            "En el pipeline del front ya pasamos a Node 20 LTS; con versiones anteriores "
            "falla el build de Vite.",
        ),
    ),
    Pair(
        "es-c-daily-hora",
        "es",
        "clock",
        True,
        (
            "La daily es a las 9:30",
            "Quince minutos como mucho, por Meet, empezando a las 9:30 en punto.",
        ),
        (
            "Stand-up del equipo: diez de la mañana",
            "Nos juntamos a las diez para contar qué hicimos ayer y qué bloquea; quien no "
            "pueda, deja su resumen en el hilo.",
        ),
    ),
    Pair(
        "es-c-vacaciones-dias",
        "es",
        "count",
        True,
        (
            "Cada persona tiene 23 días de vacaciones al año",
            "Se piden en Factorial con al menos dos semanas de antelación.",
        ),
        (
            "Vacaciones anuales: veintidós días laborables",
            "Según el convenio que aplicamos, son veintidós días hábiles por año natural.",
        ),
    ),
    Pair(
        "es-c-cache-catalogo",
        "es",
        "duration",
        True,
        (
            "La caché del catálogo expira a los 5 minutos",
            "Los cambios de precio tardan como mucho cinco minutos en verse en la tienda.",
        ),
        (
            "TTL de productos en Redis: una hora",
            "Las fichas de producto se guardan en Redis con expiración de 3600 s; para "
            "forzar un cambio hay que invalidar la clave a mano.",
        ),
    ),
    Pair(
        "es-c-metricas-retencion",
        "es",
        "retention",
        True,
        (
            "Prometheus conserva las métricas 15 días",
            "La flag --storage.tsdb.retention.time está en 15d; no tenemos almacenamiento "
            "a largo plazo.",
        ),
        (
            "Histórico de métricas: tres meses",
            "Con Thanos guardamos el histórico trimestral, así que se pueden comparar "
            "gráficas de hace noventa días.",
        ),
    ),
    Pair(
        "es-c-viernes-prod",
        "es",
        "yesno",
        True,
        (
            "No se despliega a producción los viernes",
            "Norma del equipo: nada sale a prod en viernes, salvo hotfix aprobado por el "
            "responsable de guardia.",
        ),
        (
            "Los viernes también sacamos a prod",
            "Con los despliegues canary ya no hay restricción de día; el viernes se publica "
            "igual que cualquier otro.",
        ),
    ),
    Pair(
        "es-c-portatil-nuevos",
        "es",
        "choice",
        True,
        (
            "A la gente nueva se le entrega un MacBook Pro",
            "IT prepara el MacBook con Jamf antes del primer día.",
        ),
        (
            "Equipo de bienvenida: ThinkPad con Ubuntu",
            "Los recién llegados reciben un Lenovo ThinkPad con Ubuntu ya instalado y el "
            "disco cifrado.",
        ),
    ),
    Pair(
        "es-c-sla-criticos",
        "es",
        "duration",
        True,
        (
            "Primera respuesta a tickets críticos: una hora",
            "El SLA firmado con clientes enterprise es contestar los tickets de prioridad "
            "crítica en 60 minutos como máximo.",
        ),
        (
            "Los P1 de clientes se contestan en menos de 4 horas",
            "Para incidencias P1 nos comprometemos a dar la primera respuesta antes de "
            "cuatro horas, también en fin de semana.",
        ),
    ),
    Pair(
        "es-c-facturas-dia",
        "es",
        "date",
        True,
        (
            "Las facturas mensuales se emiten el día 1",
            "El proceso de cobro genera y envía las facturas el primer día de cada mes.",
        ),
        (
            "Cierre de facturación: el 5 de cada mes",
            "Finanzas lanza la emisión de facturas el día 5, después de conciliar los "
            "consumos del mes anterior.",
        ),
    ),
    Pair(
        "es-c-etl-hora",
        "es",
        "clock",
        True,
        (
            "La carga del data warehouse corre a las 6:00",
            "El DAG principal de Airflow está programado a las seis para que los informes "
            "estén listos al empezar la jornada.",
        ),
        (
            "Ingesta del almacén de datos: medianoche",
            "El job que vuelca las tablas de ventas al warehouse se lanza a las 00:00.",
        ),
    ),
    Pair(
        "es-c-clave-longitud",
        "es",
        "limit",
        True,
        (
            "Las contraseñas deben tener al menos 12 caracteres",
            "La validación del registro rechaza claves de menos de doce caracteres.",
        ),
        (
            "Longitud mínima de clave: 8",
            "Con ocho caracteres basta; lo que exigimos es que no aparezca en la lista de "
            "contraseñas filtradas.",
        ),
    ),
    Pair(
        "es-c-cobertura-umbral",
        "es",
        "limit",
        True,
        (
            "La CI falla si la cobertura baja del 80 %",
            "El job de tests corta el pipeline cuando la cobertura total queda por debajo "
            "del 80 por ciento.",
        ),
        (
            "Umbral de cobertura de tests: 70%",
            "Rebajamos el mínimo exigido a un 70 % porque el módulo legacy no tiene tests.",
        ),
    ),
    # ---------------------------------------------------------------- compatibles
    Pair(
        "es-ok-pasarela-timeout",
        "es",
        "units",
        False,
        (
            "Timeout de la pasarela de pagos: 30 segundos",
            "El cliente HTTP hacia la pasarela tiene timeout=30s; si salta, el pedido "
            "queda como pendiente.",
        ),
        (
            "Cortamos la llamada al proveedor de pago al medio minuto",
            "Si la pasarela tarda más de medio minuto en responder, abortamos y "
            "reintentamos en segundo plano.",
        ),
    ),
    Pair(
        "es-ok-postmortem-hora",
        "es",
        "units",
        False,
        (
            "La revisión de incidentes es los miércoles a las 14:00",
            "Se repasan los postmortems de la semana y se asignan las acciones pendientes.",
        ),
        (
            "Postmortem semanal: miércoles, 2 de la tarde",
            "Reunión de una hora para revisar incidentes; trae la línea temporal escrita.",
        ),
    ),
    Pair(
        "es-ok-mantenimiento-media-hora",
        "es",
        "units",
        False,
        (
            "La ventana de mantenimiento de la base dura 30 minutos",
            "Durante ese tiempo la web muestra la página de mantenimiento.",
        ),
        (
            "Parada de la BD: media hora",
            "Para los upgrades menores de la base de datos avisamos a clientes de una "
            "parada de media hora.",
        ),
    ),
    Pair(
        "es-ok-worker-memoria",
        "es",
        "units",
        False,
        (
            "El worker de informes tiene un límite de memoria de 1,5 GB",
            "Con menos se queda sin RAM al generar los PDF anuales.",
        ),
        (
            "Recursos del worker de informes",
            "En el manifiesto le damos limits.memory: 1536Mi; por encima, Kubernetes lo "
            "mata por OOM.",
        ),
    ),
    Pair(
        "es-ok-sprint-duracion",
        "es",
        "units",
        False,
        (
            "Los sprints duran dos semanas",
            "Planificación el primer lunes y retro el último viernes.",
        ),
        (
            "Trabajamos en iteraciones de 14 días",
            "Cada iteración termina con una demo a producto.",
        ),
    ),
    Pair(
        "es-ok-informe-diario",
        "es",
        "units",
        False,
        (
            "El informe diario de ventas se manda a las 7 de la mañana",
            "Llega a la lista de dirección con las cifras del día anterior.",
        ),
        (
            "Resumen del día: correo de las 07:00",
            "A las 07:00 sale automáticamente el email con las ventas de ayer.",
        ),
    ),
    Pair(
        "es-ok-pedidos-entornos",
        "es",
        "subject",
        False,
        (
            "El servicio de pedidos en staging corre con una única réplica",
            "Para ahorrar costes, staging no tiene alta disponibilidad.",
        ),
        (
            "En producción, pedidos escala a cuatro réplicas",
            "El HPA de prod tiene mínimo y máximo en 4 para el servicio de pedidos.",
        ),
    ),
    Pair(
        "es-ok-app-version-minima",
        "es",
        "subject",
        False,
        (
            "La app de iOS exige como mínimo iOS 15",
            "Los dispositivos con versiones anteriores ya no reciben actualizaciones.",
        ),
        (
            "En Android soportamos desde la 8.0",
            "El minSdkVersion de la app Android es 26, o sea Android 8.0.",
        ),
    ),
    Pair(
        "es-ok-soporte-grabaciones",
        "es",
        "subject",
        False,
        (
            "Las grabaciones de llamadas de soporte se guardan 90 días",
            "Después se borran automáticamente de la centralita.",
        ),
        (
            "Los chats de soporte se conservan dos años",
            "Zendesk mantiene las conversaciones escritas durante dos años por si hay "
            "reclamaciones.",
        ),
    ),
    Pair(
        "es-ok-planes-usuarios",
        "es",
        "subject",
        False,
        (
            "El plan Básico permite 3 usuarios",
            "Si un cliente Básico intenta invitar a un cuarto, le ofrecemos pasar a Pro.",
        ),
        (
            "En el plan Pro entran hasta 20 usuarios",
            "A partir de veinte, el cliente tiene que negociar un plan Enterprise.",
        ),
    ),
    Pair(
        "es-ok-api-autenticacion",
        "es",
        "subject",
        False,
        (
            "La API interna no pide autenticación desde la VPN",
            "Dentro de la red corporativa los servicios internos se llaman sin token.",
        ),
        (
            "La API pública siempre exige token",
            "Cualquier petición sin Bearer válido recibe un 401, venga de donde venga.",
        ),
    ),
    Pair(
        "es-ok-versiones-fechas",
        "es",
        "subject",
        False,
        (
            "La versión 3.2 salió el 3 de marzo",
            "Incluía el nuevo editor de plantillas y el modo oscuro.",
        ),
        (
            "La 3.3 está prevista para el 28/04/2025",
            "Si QA encuentra bloqueantes se retrasará una semana.",
        ),
    ),
    Pair(
        "es-ok-redis-sesiones",
        "es",
        "attribute",
        False,
        (
            "El Redis de sesiones tiene 2 GB de memoria",
            "Con el tráfico actual va por el 60 % de uso.",
        ),
        (
            "Redis de sesiones: versión 7.2",
            "Lo actualizamos el mes pasado desde la 6.2 sin incidencias.",
        ),
    ),
    Pair(
        "es-ok-certificado-web",
        "es",
        "attribute",
        False,
        (
            "El certificado TLS del dominio principal lo emite Let's Encrypt",
            "cert-manager se encarga de pedirlo y renovarlo.",
        ),
        (
            "El certificado de la web caduca el 12 de junio",
            "Si la renovación automática falla, hay que revisarlo la semana anterior.",
        ),
    ),
    Pair(
        "es-ok-guardia-rotacion",
        "es",
        "attribute",
        False,
        (
            "La guardia rota cada semana, los lunes a las 10",
            "El traspaso se hace en el canal de guardias con un resumen de lo pendiente.",
        ),
        (
            "Quien esté de guardia tiene 15 minutos para responder a una alerta",
            "Si no hay acuse en ese plazo, PagerDuty escala a la segunda persona.",
        ),
    ),
    Pair(
        "es-ok-ci-historia",
        "es",
        "history",
        False,
        (
            "Antes usábamos Jenkins; desde enero todo va en GitHub Actions",
            "El servidor de Jenkins se apagó tras migrar el último pipeline.",
        ),
        (
            "La CI corre en GitHub Actions",
            "Los workflows están en .github/workflows de cada repo.",
        ),
    ),
    Pair(
        "es-ok-crm-historia",
        "es",
        "history",
        False,
        (
            "Migramos el CRM de MySQL 5.7 a PostgreSQL en 2023",
            "La migración llevó tres meses y se hizo con doble escritura.",
        ),
        (
            "La base de datos del CRM es PostgreSQL",
            "Las credenciales de solo lectura están en el gestor de secretos.",
        ),
    ),
    Pair(
        "es-ok-demo-historia",
        "es",
        "history",
        False,
        (
            "La demo del sprint se hacía los jueves; desde marzo pasó a los viernes",
            "El cambio fue para que diera tiempo a cerrar las historias.",
        ),
        (
            "Demo de sprint: viernes a las 12",
            "Se enseña a producto lo terminado en la iteración.",
        ),
    ),
    Pair(
        "es-ok-buscador-replicas",
        "es",
        "range",
        False,
        (
            "El autoscaler del buscador mantiene entre 2 y 6 réplicas",
            "Escala por CPU al 70 %.",
        ),
        (
            "Ahora mismo el buscador corre con 3 réplicas",
            "Es lo que muestra el dashboard esta mañana, con tráfico normal.",
        ),
    ),
    Pair(
        "es-ok-checkout-latencia",
        "es",
        "range",
        False,
        (
            "La latencia p95 del checkout suele estar entre 200 y 400 ms",
            "Por encima de 400 ms conviene mirar la base de datos.",
        ),
        (
            "Ayer el p95 del checkout fue de 310 ms",
            "Nada raro en las gráficas durante el pico de la tarde.",
        ),
    ),
    Pair(
        "es-ok-migraciones-detalle",
        "es",
        "elaboration",
        False,
        (
            "Las migraciones de esquema se revisan antes de mezclar",
            "No se mezcla ninguna migración sin revisión.",
        ),
        (
            "Cómo revisamos las migraciones",
            "Toda migración necesita el visto bueno de alguien del equipo de datos, y si "
            "bloquea tablas grandes se programa fuera de horario.",
        ),
    ),
    Pair(
        "es-ok-vault-detalle",
        "es",
        "elaboration",
        False,
        (
            "Los secretos de las aplicaciones viven en Vault",
            "Nada de variables de entorno con contraseñas en los manifiestos.",
        ),
        (
            "Vault: cómo llegan los secretos a los pods",
            "Las apps los leen al arrancar con su rol de Kubernetes; las credenciales de "
            "base de datos se rotan cada 90 días.",
        ),
    ),
    Pair(
        "es-ok-correo-tamano",
        "es",
        "restated",
        False,
        (
            "El tamaño máximo de los correos salientes es de 20 MB",
            "Lo impone el servidor SMTP del proveedor.",
        ),
        (
            "Los emails que enviamos no pueden pasar de 20 megas",
            "Si el adjunto es mayor, mandamos un enlace de descarga en su lugar.",
        ),
    ),
    Pair(
        "es-ok-oficina-apertura",
        "es",
        "restated",
        False,
        (
            "La oficina abre a las 8",
            "Antes de esa hora la puerta del edificio no acepta tarjetas.",
        ),
        (
            "A partir de las ocho ya se puede entrar",
            "El edificio de la oficina da acceso desde las ocho; seguridad está en recepción.",
        ),
    ),
    Pair(
        "es-ok-notificaciones-numeros",
        "es",
        "attribute",
        False,
        (
            "El servicio de notificaciones escucha en el puerto 8080",
            "El health check está en /healthz en ese mismo puerto.",
        ),
        (
            "Notificaciones manda como máximo 500 push por segundo",
            "Es el límite que nos da Firebase en nuestro plan.",
        ),
    ),
    Pair(
        "es-ok-kafka-numeros",
        "es",
        "attribute",
        False,
        (
            "El clúster de Kafka tiene 3 brokers",
            "Uno por zona de disponibilidad.",
        ),
        (
            "Los topics de Kafka se crean con 12 particiones",
            "Así podemos tener hasta doce consumidores en paralelo por grupo.",
        ),
    ),
]

TOPICS: list[Topic] = [
    # ---------------------------------------------------------------- mismos
    Topic(
        "es-t-staging-ci",
        "es",
        "paraphrase",
        True,
        (
            (
                "Los despliegues a staging requieren un pipeline en verde",
                "El job de deploy a staging solo se habilita si todos los checks han pasado.",
            ),
            (
                "Nada llega a staging sin pasar la CI",
                "Si algún test falla, el entorno de pruebas no se actualiza.",
            ),
            (
                "La CI tiene que pasar antes de publicar en staging",
                "Primero integración continua correcta, después se sube a preproducción.",
            ),
        ),
    ),
    Topic(
        "es-t-revision-pr",
        "es",
        "paraphrase",
        True,
        (
            (
                "Cada PR necesita dos aprobaciones antes de mezclar",
                "Lo exige la protección de rama en todos los repos.",
            ),
            (
                "No se hace merge sin el OK de dos revisores",
                "Una sola review no basta, aunque el cambio sea pequeño.",
            ),
            (
                "Hacen falta 2 reviews aprobadas para integrar en main",
                "GitHub bloquea el botón hasta tener el segundo visto bueno.",
            ),
        ),
    ),
    Topic(
        "es-t-credenciales-chat",
        "es",
        "paraphrase",
        True,
        (
            (
                "Las credenciales no se pegan en Slack",
                "Ni en canales ni en mensajes directos; se comparten por 1Password.",
            ),
            (
                "Para pasar una contraseña a un compañero, usar 1Password",
                "Nunca mandarla por el chat del equipo.",
            ),
        ),
    ),
    Topic(
        "es-t-idioma-codigo",
        "es",
        "paraphrase",
        True,
        (
            (
                "El código y los comentarios se escriben en inglés",
                "Vale para todos los repositorios, también los internos.",
            ),
            (
                "Nombres de variables y docstrings, siempre en inglés",
                "Aunque el equipo hable español, lo que va en el repo no se redacta en castellano.",
            ),
        ),
    ),
    Topic(
        "es-t-alerta-disco",
        "es",
        "paraphrase",
        True,
        (
            (
                "Salta una alerta cuando un disco pasa del 85 %",
                "La regla está en Alertmanager y aplica a todos los nodos.",
            ),
            (
                "Aviso de almacenamiento al 85 por ciento",
                "Si un volumen de cualquier servidor se llena hasta el 85 %, PagerDuty nos avisa.",
            ),
        ),
    ),
    Topic(
        "es-t-horario-soporte",
        "es",
        "paraphrase",
        True,
        (
            (
                "Soporte atiende de lunes a viernes de 9 a 18",
                "Fuera de ese horario no hay nadie en el chat de clientes.",
            ),
            (
                "Los tickets que entran por la noche esperan al día siguiente",
                "El equipo de atención al cliente trabaja en días laborables, de 9:00 a 18:00.",
            ),
        ),
    ),
    Topic(
        "es-t-renovate",
        "es",
        "paraphrase",
        True,
        (
            (
                "Renovate abre PRs de actualización de dependencias los lunes",
                "Están agrupadas por ecosistema: npm, pip y Docker.",
            ),
            (
                "Cada lunes aparecen las PRs automáticas con librerías nuevas",
                "Las genera el bot de Renovate; quien esté de guardia las revisa.",
            ),
        ),
    ),
    Topic(
        "es-t-fechas-api",
        "es",
        "paraphrase",
        True,
        (
            (
                "La API devuelve las fechas en ISO 8601 y UTC",
                "Nunca en hora local del servidor.",
            ),
            (
                "Timestamps de respuesta: formato ISO, zona UTC",
                "Convertir a la zona del usuario es cosa del cliente.",
            ),
        ),
    ),
    Topic(
        "es-t-feature-flags",
        "es",
        "paraphrase",
        True,
        (
            (
                "Las funcionalidades nuevas salen detrás de un feature flag",
                "Se activan poco a poco desde Unleash.",
            ),
            (
                "Nada nuevo se enciende para todos de golpe",
                "Primero va tras un interruptor en Unleash y se abre por porcentajes de usuarios.",
            ),
        ),
    ),
    Topic(
        "es-t-visitas-oficina",
        "es",
        "paraphrase",
        True,
        (
            (
                "Las visitas tienen que registrarse en recepción",
                "Se les da una tarjeta de invitado que devuelven al salir.",
            ),
            (
                "Cualquier invitado firma en la entrada al llegar",
                "Quien traiga a alguien a la oficina lo acompaña hasta el mostrador.",
            ),
        ),
    ),
    Topic(
        "es-t-datos-ue",
        "es",
        "paraphrase",
        True,
        (
            (
                "Los datos personales de clientes europeos no salen de la UE",
                "Ningún proveedor fuera de la Unión puede almacenarlos.",
            ),
            (
                "Por RGPD, la información de usuarios de Europa se queda en centros europeos",
                "Lo revisa el DPO antes de contratar cualquier servicio nuevo.",
            ),
        ),
    ),
    Topic(
        "es-t-canal-incidentes",
        "es",
        "paraphrase",
        True,
        (
            (
                "Las incidencias graves se comunican en #incidentes",
                "Con un mensaje corto: qué falla, desde cuándo y quién lo lleva.",
            ),
            (
                "Si se cae algo importante, avisar en el canal de incidentes",
                "Antes de ponerse a arreglarlo, que el resto sepa que está pasando.",
            ),
            (
                "Toda caída en producción se anuncia primero en Slack",
                "El sitio es #incidentes, no los canales de cada equipo.",
            ),
        ),
    ),
    Topic(
        "es-t-terraform-version",
        "es",
        "duplicate",
        True,
        (
            (
                "El repositorio de infraestructura usa Terraform 1.6",
                "La versión está fijada en required_version.",
            ),
            (
                "Terraform 1.6 es la versión del repo de infra",
                "Está fijada en required_version.",
            ),
        ),
    ),
    Topic(
        "es-t-stripe-cobros",
        "es",
        "duplicate",
        True,
        (
            (
                "Los pagos con tarjeta se procesan con Stripe",
                "Los webhooks llegan al servicio de cobros.",
            ),
            (
                "Stripe procesa los cobros con tarjeta",
                "Sus webhooks llegan al servicio de cobros.",
            ),
        ),
    ),
    Topic(
        "es-t-sentry-movil",
        "es",
        "duplicate",
        True,
        (
            (
                "La app móvil manda los crashes a Sentry",
                "Proyecto mobile-app, con los símbolos subidos en cada build.",
            ),
            (
                "Los crashes de la app móvil se reportan en Sentry",
                "Van al proyecto mobile-app; los símbolos se suben en cada build.",
            ),
        ),
    ),
    Topic(
        "es-t-panel-ventas",
        "es",
        "duplicate",
        True,
        (
            (
                "El dashboard de ventas se refresca cada hora",
                "Los datos vienen de la réplica de lectura.",
            ),
            (
                "El panel de ventas se actualiza cada hora",
                "Tira de la réplica de lectura.",
            ),
        ),
    ),
    # ---------------------------------------------------------------- distintos
    Topic(
        "es-t-cola-palabras",
        "es",
        "samewords",
        False,
        (
            (
                "La cola de correos se vacía cada 5 minutos",
                "El worker de emails procesa los pendientes en lotes de cien.",
            ),
            (
                "La cola de la impresora de la oficina se atasca con PDF grandes",
                "Mejor imprimir los planos desde el ordenador de recepción.",
            ),
        ),
    ),
    Topic(
        "es-t-email-usuarios",
        "es",
        "samewords",
        False,
        (
            (
                "La tabla de usuarios tiene un índice único por email",
                "Por eso el registro falla si el email ya existe, en vez de duplicar.",
            ),
            (
                "El email de bienvenida a usuarios nuevos sale desde Mailgun",
                "La plantilla está en el repo de marketing.",
            ),
        ),
    ),
    Topic(
        "es-t-puerto-palabras",
        "es",
        "samewords",
        False,
        (
            (
                "El puerto 5432 de la base de datos solo acepta conexiones internas",
                "Desde fuera hay que pasar por el bastión.",
            ),
            (
                "Los puertos USB de los portátiles están bloqueados por política",
                "Para usar un pendrive hay que pedir una excepción a IT.",
            ),
        ),
    ),
    Topic(
        "es-t-logs-palabras",
        "es",
        "samewords",
        False,
        (
            (
                "Los logs de auditoría se envían a un bucket inmutable",
                "Tiene object lock activado; ni los administradores pueden borrarlos.",
            ),
            (
                "Los logs del build de Android se descargan desde los artefactos",
                "En la pestaña Artifacts del workflow de GitHub Actions.",
            ),
        ),
    ),
    Topic(
        "es-t-limite-cincuenta",
        "es",
        "samewords",
        False,
        (
            (
                "Límite de 50 usuarios en la licencia de Jira",
                "Antes de dar de alta a alguien, revisar si hay cuentas inactivas.",
            ),
            (
                "Límite de 50 conexiones en el pool de la base",
                "Si se agotan, las peticiones esperan hasta cinco segundos.",
            ),
        ),
    ),
    Topic(
        "es-t-migracion-palabras",
        "es",
        "samewords",
        False,
        (
            (
                "La migración a Kubernetes del buscador está pausada",
                "Hasta que resolvamos el problema de memoria de Elasticsearch.",
            ),
            (
                "La migración 0042 añade la columna pais a clientes",
                "Es reversible y no bloquea la tabla.",
            ),
        ),
    ),
    Topic(
        "es-t-version-junio",
        "es",
        "samewords",
        False,
        (
            (
                "La versión 2 de la API de pedidos se retira en junio",
                "Los clientes que la usen reciben un aviso por correo.",
            ),
            (
                "La versión 2 del diseño de la web se presenta en junio",
                "El equipo de diseño enseñará los prototipos al cliente.",
            ),
        ),
    ),
    Topic(
        "es-t-facturas-complementario",
        "es",
        "complementary",
        False,
        (
            (
                "Las facturas se generan en PDF y se mandan por correo",
                "Además quedan disponibles en el área de cliente.",
            ),
            (
                "Los reembolsos requieren aprobación de finanzas",
                "Soporte abre la solicitud y finanzas la valida en dos días.",
            ),
            (
                "El IVA se calcula según el país del cliente",
                "Con NIF intracomunitario de la UE se aplica inversión del sujeto pasivo.",
            ),
        ),
    ),
    Topic(
        "es-t-publicacion-ios",
        "es",
        "complementary",
        False,
        (
            (
                "La app de iOS se sube a TestFlight para QA",
                "QA prueba la build allí antes de mandarla a revisión.",
            ),
            (
                "Las capturas de la App Store las prepara diseño",
                "Hay que pedirlas con una semana de margen si cambia la interfaz.",
            ),
        ),
    ),
    Topic(
        "es-t-incorporacion",
        "es",
        "complementary",
        False,
        (
            (
                "El primer día se entrega el portátil y la tarjeta de acceso",
                "Lo prepara IT con antelación.",
            ),
            (
                "Cada persona nueva tiene un mentor durante el primer mes",
                "El mentor revisa sus primeras PRs y resuelve dudas del día a día.",
            ),
        ),
    ),
    Topic(
        "es-t-pipeline-eventos",
        "es",
        "complementary",
        False,
        (
            (
                "El pipeline de eventos escribe en BigQuery particionado por día",
                "Las tablas se llaman events_YYYYMMDD.",
            ),
            (
                "Los eventos duplicados se filtran por id en la limpieza",
                "Se queda el primero que llega y se descartan los repetidos.",
            ),
        ),
    ),
    Topic(
        "es-t-seguridad-revisiones",
        "es",
        "complementary",
        False,
        (
            (
                "Los escaneos de dependencias vulnerables los hace Dependabot",
                "Las alertas críticas se asignan al equipo dueño del repo.",
            ),
            (
                "Hacemos un pentest externo una vez al año",
                "El informe se guarda en la carpeta de seguridad del Drive.",
            ),
        ),
    ),
    Topic(
        "es-t-rack-laboratorio",
        "es",
        "complementary",
        False,
        (
            (
                "Los servidores de laboratorio están en el rack 3 del sótano",
                "La llave la tiene el responsable de sistemas.",
            ),
            (
                "El SAI del rack aguanta unos veinte minutos sin corriente",
                "Pasado ese tiempo los equipos se apagan de forma ordenada.",
            ),
        ),
    ),
    Topic(
        "es-t-documentacion-api",
        "es",
        "complementary",
        False,
        (
            (
                "La documentación de la API se genera con OpenAPI",
                "El esquema sale del código y se publica en cada release.",
            ),
            (
                "Los endpoints obsoletos llevan la cabecera Deprecation",
                "Junto con Sunset, que indica la fecha en que dejarán de funcionar.",
            ),
        ),
    ),
]
