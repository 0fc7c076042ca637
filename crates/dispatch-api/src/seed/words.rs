//! The vocabulary of the demo data: Brazilian names, places and the dispatch centre's lists.

pub const FIRST_NAMES: &[&str] = &[
    "João",
    "José",
    "Antônio",
    "Francisco",
    "Luís",
    "Sérgio",
    "Fábio",
    "Otávio",
    "Rogério",
    "Márcio",
    "Cláudio",
    "Vinícius",
    "Caetano",
    "Benedito",
    "Raimundo",
    "Joaquim",
    "André",
    "Maria",
    "Conceição",
    "Lúcia",
    "Márcia",
    "Flávia",
    "Inês",
    "Débora",
    "Vitória",
    "Cláudia",
    "Júlia",
    "Letícia",
    "Mônica",
    "Patrícia",
    "Ângela",
    "Tânia",
    "Bárbara",
    "Célia",
    "Luíza",
    "Helena",
    "Beatriz",
    "Mariana",
    "Gabriela",
    "Renata",
    "Eduardo",
    "Rafael",
    "Thiago",
];

pub const LAST_NAMES: &[&str] = &[
    "Silva",
    "Santos",
    "Oliveira",
    "Souza",
    "Lima",
    "Pereira",
    "Ferreira",
    "Costa",
    "Rodrigues",
    "Almeida",
    "Nascimento",
    "Araújo",
    "Gonçalves",
    "Simões",
    "da Conceição",
    "Magalhães",
    "Brandão",
    "Assunção",
    "Guimarães",
    "Falcão",
    "Sá",
    "Mendonça",
    "Albuquerque",
    "Damasceno",
    "Lopes",
    "Ribeiro",
    "Carvalho",
    "Gomes",
    "Martins",
    "Barbosa",
    "Rocha",
    "Monteiro",
    "Cavalcanti",
    "Teixeira",
    "Castro",
    "Quintão",
    "Aragão",
    "Estêvão",
];

/// (city, UF, area code)
pub const CITIES: &[(&str, &str, &str)] = &[
    ("São José dos Campos", "SP", "12"),
    ("São Paulo", "SP", "11"),
    ("Ribeirão Preto", "SP", "16"),
    ("São José", "SC", "48"),
    ("Florianópolis", "SC", "48"),
    ("Belém", "PA", "91"),
    ("Maceió", "AL", "82"),
    ("Goiânia", "GO", "62"),
    ("Niterói", "RJ", "21"),
    ("Uberlândia", "MG", "34"),
    ("Vitória", "ES", "27"),
    ("São Luís", "MA", "98"),
];

pub const HEALTH_UNIT_KINDS: &[&str] = &[
    "Unidade Básica de Saúde",
    "Hospital Municipal",
    "Pronto-Socorro",
    "UPA 24h",
    "Centro de Saúde",
    "Policlínica",
    "Hospital Regional",
    "Clínica da Família",
    "CAPS",
    "Maternidade",
    "Posto de Saúde",
    "Hospital São Lucas de",
];

/// The kinds of [`HEALTH_UNIT_KINDS`] an ambulance takes a patient to: hospitals, emergency
/// rooms, UPAs and maternity wards. Not the health posts, basic health units, family clinics,
/// polyclinics or CAPS (no emergency door).
pub const RECEIVING_KINDS: &[&str] = &[
    "Hospital Municipal",
    "Pronto-Socorro",
    "UPA 24h",
    "Hospital Regional",
    "Maternidade",
    "Hospital São Lucas de",
];

/// Where a health unit of the demo city stands: at the spot of the place its name ends with
/// (`{kind} {place}`), 600 m north-east of the place's base so a unit at its door is not
/// read as at home; `None` for another city's unit or an unknown place.
pub fn health_unit_location(name: &str, city: &str) -> Option<(f64, f64)> {
    if city != CITIES[0].0 {
        return None;
    }
    let i = PLACES
        .iter()
        .enumerate()
        .filter(|(_, p)| name.ends_with(&format!(" {p}")))
        .max_by_key(|(_, p)| p.len())?
        .0;
    let (lat, lon) = base_location(i);
    let d = 0.6 / 111.2 / std::f64::consts::SQRT_2;
    let lat2 = lat + d;
    let lon2 = lon + d / lat.to_radians().cos();
    Some(((lat2 * 1e4).round() / 1e4, (lon2 * 1e4).round() / 1e4))
}

pub const PLACES: &[&str] = &[
    "São José",
    "Santa Luzia",
    "Jardim São João",
    "Vila Conceição",
    "Nossa Senhora Aparecida",
    "Dr. João Ribeiro",
    "Padre Anchieta",
    "Alto da Boa Vista",
    "Santa Terezinha",
    "Jardim Paulistânia",
    "Três Corações",
    "Ipê Amarelo",
    "Centro",
    "Vila Industrial",
    "Bosque dos Eucaliptos",
    "Jardim Satélite",
    "Parque Independência",
    "Vila Maria",
    "Santana",
    "Jacareí",
    "Campo dos Alemães",
    "Vila Ema",
    "Jardim América",
    "Boa Esperança",
    "Ponte Nova",
    "Aeroporto",
    "Cidade Nova",
    "Vila São Bento",
    "Jardim Imperial",
    "Monte Castelo",
    "Bela Vista",
    "Santo Antônio",
    "São Judas Tadeu",
    "Lagoa Seca",
    "Coqueiral",
    "Ilha do Maranhão",
    "Serra Dourada",
    "Capão Raso",
    "Vila Guarani",
    "Barra do Ceará",
    "Piçarreira",
    "Açude",
    "Cachoeirinha",
    "Ouro Branco",
    "Mangueiral",
    "Pôr do Sol",
    "Rio Comprido",
    "Várzea",
    "Boqueirão",
    "Esperança",
    "Graças",
    "Jardim Botânico",
    "Recanto das Águas",
    "Chácara Flora",
    "Itaquera",
    "Cidade Jardim",
    "Parque São Jorge",
    "Vila Tesouro",
    "Urbanova",
    "Eugênio de Melo",
    "Jardim Oriente",
    "Ribeirão Vermelho",
    "Conjunto Habitacional",
    "Distrito Industrial",
];

pub const STREETS: &[&str] = &[
    "Rua Sete de Setembro",
    "Avenida São João",
    "Rua das Acácias",
    "Rua Dom Pedro II",
    "Avenida Brasil",
    "Rua Tiradentes",
    "Rua Marechal Deodoro",
    "Avenida Getúlio Vargas",
    "Rua Quinze de Novembro",
    "Rua da Conceição",
    "Travessa São Benedito",
    "Rua Paraíba",
    "Avenida Independência",
    "Rua Álvares Cabral",
    "Rua Barão do Rio Branco",
];

pub const COMPLAINTS: &[&str] = &[
    "Dor torácica",
    "Queda de altura",
    "Convulsão",
    "Acidente de trânsito com vítima",
    "Dificuldade para respirar",
    "Desmaio",
    "Ferimento por arma branca",
    "Suspeita de AVC",
    "Trabalho de parto",
    "Intoxicação",
    "Queimadura",
    "Hipoglicemia",
    "Crise hipertensiva",
    "Atropelamento",
    "Afogamento",
    "Febre alta em criança",
    "Crise de ansiedade",
    "Sangramento abundante",
];

pub const OCCURRENCE_TYPES: &[&str] = &[
    "Clínico",
    "Trauma",
    "Obstétrico",
    "Psiquiátrico",
    "Pediátrico",
];

pub const PRIORITIES: &[&str] = &["low", "medium", "high", "critical"];

pub const TEAMS: &[&str] = &[
    "Equipe Alfa",
    "Equipe Bravo",
    "Equipe Charlie",
    "Equipe Delta",
    "Equipe Eco",
    "Equipe Foxtrot",
];

/// (name, active)
pub const PROFESSIONAL_TYPES: &[(&str, bool)] = &[
    ("Médico", true),
    ("Enfermeiro", true),
    ("Técnico de Enfermagem", true),
    ("Condutor Socorrista", true),
    ("Técnico Auxiliar de Regulação Médica", true),
    ("Rádio-operador", true),
    ("Administrativo", true),
    ("Auxiliar de Enfermagem", false),
    ("Telefonista", false),
];

/// (name, description, active)
pub const MOBILE_UNIT_TYPES: &[(&str, &str, bool)] = &[
    ("USA", "Unidade de Suporte Avançado", true),
    ("USB", "Unidade de Suporte Básico", true),
    ("Motolância", "Motocicleta de intervenção rápida", true),
    ("VIR", "Veículo de Intervenção Rápida", true),
    ("Ambulancha", "Embarcação de resgate", false),
    ("Aeromédico", "Helicóptero de resgate", false),
];

/// (type name, how many units, how many of them inactive)
pub const FLEET: &[(&str, usize, usize)] = &[
    ("USA", 15, 2),
    ("USB", 35, 4),
    ("Motolância", 6, 1),
    ("VIR", 4, 0),
];

/// (name, active, deleted, the vehicle type it sends)
pub const DECISION_ACTIONS: &[(&str, bool, bool, Option<&str>)] = &[
    ("Envio de USA", true, false, Some("USA")),
    ("Envio de USB", true, false, Some("USB")),
    ("Envio de motolância", true, false, Some("Motolância")),
    ("Orientação médica por telefone", true, false, None),
    ("Encaminhamento a unidade de saúde", true, false, None),
    ("Transferência inter-hospitalar", true, false, Some("USA")),
    ("Acionamento do Corpo de Bombeiros", true, false, None),
    ("Envio de ambulancha", false, false, Some("Ambulancha")),
    ("Consulta domiciliar", true, true, None),
    ("Aguardar nova ligação", false, true, None),
];

/// (name, active, deleted)
pub const INTERCURRENCES: &[(&str, bool, bool)] = &[
    ("Pane mecânica", true, false),
    ("Pneu furado", true, false),
    ("Trânsito intenso", true, false),
    ("Endereço não localizado", true, false),
    ("Paciente recusou atendimento", true, false),
    ("Agressão à equipe", true, false),
    ("Óbito no local", true, false),
    ("Falta de maca na unidade de destino", true, false),
    ("Falta de combustível", false, false),
    ("Rádio inoperante", true, true),
];

pub const UNALLOCATED_REASONS: &[&str] = &[
    "Folga",
    "Sem viatura",
    "Aguardando escala",
    "Treinamento",
    "Remanejamento",
];

pub const CONCLUSIONS: &[&str] = &[
    "Paciente transportado e entregue à unidade de destino.",
    "Atendimento concluído no local, paciente liberado.",
    "Orientação médica por telefone, sem necessidade de viatura.",
    "Paciente removido por meios próprios.",
];

/// Where the demo's bases are: the fleet's places in São José dos Campos (SP), the first demo
/// city, at the approximate centre of the neighbourhood of that name where the city has one
/// (Centro, Vila Industrial, Jardim Satélite, ...; Jacareí is the neighbouring city's centre).
/// A place the city has no neighbourhood of is put on a ring 3 to 9 km around the city's
/// centre, the same spot every run (docs/dispatch-routes.md, "Positions and a recommendation").
pub const KNOWN_BASES: &[(&str, f64, f64)] = &[
    ("Centro", -23.1794, -45.8869),
    ("Vila Industrial", -23.1990, -45.8650),
    ("Bosque dos Eucaliptos", -23.2350, -45.8930),
    ("Jardim Satélite", -23.2250, -45.8820),
    ("Campo dos Alemães", -23.2470, -45.8860),
    ("Vila Ema", -23.1980, -45.8950),
    ("Santana", -23.1640, -45.8870),
    ("Vila Maria", -23.1850, -45.8790),
    ("Aeroporto", -23.2290, -45.8610),
    ("Monte Castelo", -23.1900, -45.8810),
    ("Jardim América", -23.2000, -45.8750),
    ("Parque Independência", -23.2200, -45.8990),
    ("Jacareí", -23.3050, -45.9660),
];

/// The demo city's centre (São José dos Campos, Praça Afonso Pena).
pub const BASE_CITY_CENTRE: (f64, f64) = (-23.1794, -45.8869);

/// The base of `PLACES[i]`: its known spot, or one on the ring around the centre.
pub fn base_location(i: usize) -> (f64, f64) {
    let place = PLACES[i];
    if let Some((_, lat, lon)) = KNOWN_BASES.iter().find(|(p, _, _)| *p == place) {
        return (*lat, *lon);
    }
    let km = 3.0 + (i % 7) as f64;
    let angle = (i as f64) * 2.399_963; // the golden angle: spots spread evenly
    let (lat0, lon0) = BASE_CITY_CENTRE;
    let lat = lat0 + km * angle.sin() / 111.2;
    let lon = lon0 + km * angle.cos() / (111.2 * lat0.to_radians().cos());
    ((lat * 1e4).round() / 1e4, (lon * 1e4).round() / 1e4)
}
