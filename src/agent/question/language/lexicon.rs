//! Words that mark a language in questions and answers about buildings, rooms and sensors, and
//! in the requests people type (greetings, off-topic asks). A word listed for several
//! languages counts for each of them, shared: `de` says less than `het`.

use super::Language;

/// The words of each supported language, lowercase.
pub(super) const WORDS: [(Language, &str); 7] = [
    (Language::English, ENGLISH),
    (Language::German, GERMAN),
    (Language::French, FRENCH),
    (Language::Spanish, SPANISH),
    (Language::Italian, ITALIAN),
    (Language::Dutch, DUTCH),
    (Language::Portuguese, PORTUGUESE),
];

const ENGLISH: &str = "
the a an is are was were be been being am do does did done have has had having
what what's which who whom whose where when why how many much there here this that these those
it its it's i i'm you you're your yours me my mine we our us they them their he she him her his
of to in on at by for with about from into over under between after before during since until
than then and or but not no yes any some all every each both either other another more most
less least right now today tonight yesterday tomorrow morning afternoon evening night week
month year hour hours minute minutes last past next current currently still already again also
just only very too so please thanks thank hello hi hey good bye goodbye can could would should
will shall may might must show tell give write make draw sing play list explain help find get
know want need like say see look check compare summarise summarize recommend translate book
reset add remove open closed free busy full empty crowded quiet loud noisy warm warmest hot
cold coldest dry humid stale stuffy people person room rooms building buildings floor floors
level levels sensor sensors temperature humidity occupancy air quality office desk desks
meeting kitchen lobby entrance visitors poem joke story song music picture recipe weather
outside inside reading readings value values high higher highest low lower lowest average peak
history data something anything anyone someone nobody funny yourself speak english time up down
out off new old best worst nearest near far long short big small large usually normal typical
often happens happen mean means whether if around through across don't doesn't isn't aren't
wasn't can't won't i'd i've let let's tell me write us give capital alerts alert updated
riddle limerick haiku little autumn winter summer spring
";

const GERMAN: &str = "
der die das den dem des ein eine einen einem einer eines ist sind war waren wird werden wurde
wurden hat haben hatte bin bist sein kann kannst können könnte könntest soll sollte muss will
möchte gibt gib zeig zeige sag sage erzähl erzähle schreib schreibe erkläre erklär hilf liste
vergleiche fasse setze übersetze empfiehl spiel sing singe wie was wer wo wann warum wieso
welche welcher welches welchem welchen viele viel wieviel nicht kein keine und oder aber mit
von vom zu zum zur im in am an auf aus bei beim für über unter nach seit bis durch gegen ohne
um es er sie ich du mir mich dir dich wir uns ihr euch man mein meine dein unser unsere gerade
jetzt heute gestern morgen morgens abend abends nacht nachmittag woche stunden stunde letzten
letzte noch schon auch nur sehr bitte danke hallo guten gute tag tschüss ja nein hier dort da
oben unten raum räume räumen zimmer gebäude gebäudes stock stockwerk stockwerke etage personen
leute menschen luft luftfeuchtigkeit feuchtigkeit temperatur wert werte belegung
besprechungsraum besprechungsräume büro küche kantine sensoren warm kalt voll leer frei laut
ruhig trocken stickig gedicht witz geschichte lied rezept wetter buch musik etwas jemand alle
allen alles beide beiden mehr ob dass wenn als wieder immer oft normalerweise lange hoch
niedrig spät uhr hauptstadt sprichst deutsch aktuell derzeit momentan beträgt liegt ab lüften
vielen dank passiert bedeutet heißt zeigt gilt lustiges zurück verlauf warnungen wärmsten ruhigsten
";

const FRENCH: &str = "
le la les l' un une des du de d' au aux est sont était étaient sera a ai as avez avons ont
être avoir fait fera peux peut pouvez puis veux voudrais aimerais je j' tu il elle on nous
vous ils elles me m' moi te t' toi se s' lui leur mon ma mes ton ta tes son sa ses notre nos
votre vos ce cet cette ces c' ça qui que qu' quoi quel quelle quels quelles où quand comment
pourquoi combien y en dans sur sous avec pour par sans chez entre depuis pendant avant après
et ou mais ne n' pas plus moins très trop aussi encore déjà toujours maintenant actuellement
aujourd'hui hier demain matin soir nuit midi semaine heures heure dernier dernière dernières
derniers bonjour bonsoir salut merci beaucoup oui non plaît ici là bas salle salles pièce
bâtiment bâtiments étage étages personnes gens air humidité température taux niveau niveaux
capteur capteurs bureau cuisine cantine réunion chaud froid plein pleine vide vides libre
libres bruyant calme sec sèche poème blague histoire chanson recette météo temps livre musique
quelque chose quelqu'un tous toutes tout deux écris raconte montre donne dis explique aide
liste compare résume traduis chante conseille mets faire signifie veut dire parles français
capitale bonne nuit es bondé hall étouffe drôle précédente alerte alertes mis jour
";

const SPANISH: &str = "
el la los las lo un una unos unas de del al a en con por para sin sobre entre desde hasta
durante y o pero no sí es son está están estás estoy era fue fueron hay había ha han he hace
hará hizo puede puedo puedes podrías quiero me te se le les nos mi mis tu tus su sus nuestro
nuestra yo tú él ella usted qué que quién quiénes cuál cuáles cuándo dónde cómo cuánto cuánta
cuántos cuántas este esta esto estos estas ese esa eso aquí allí ahí ahora mismo hoy ayer
mañana tarde noche semana horas hora últimas último última últimos todavía ya también solo
muy demasiado más menos hola gracias buenos buenas días día noches adiós favor sala salas
habitación edificio edificios planta plantas piso personas gente aire humedad temperatura
nivel niveles sensores oficina escritorio cocina cafetería reuniones reunión lleno llena
vacía vacías vacío libre libres ruido calor frío seco poema chiste historia cuento canción
receta tiempo libro música algo alguien alguna algún todos todas todo dos escribe escríbeme
cuéntame cuenta muéstrame muestra dame dime explícame explica ayúdame ayuda enumera compara
resume traduce cántame recomiéndame pon enséñame significa hablas español capital desconectado
anterior sabes saber hacer allí mucho muchas muchos gracioso hablas alguna
";

const ITALIAN: &str = "
il lo la i gli le l' un uno una un' di del dello della dei degli delle a al allo alla ai agli
alle da dal dalla in nel nello nella nei negli nelle con su sul sulla per tra fra e o ma non
sì è sono era erano sarà stato stata ha hanno ho hai c' ci vi può posso puoi potresti vorrei
voglio mi ti si mio mia miei tuo tua suo sua nostro nostra io tu lui lei noi voi loro che chi
cosa cos' quale quali qual quando dove dov' come perché quanto quanta quanti quante questo
questa questi queste quello quella qui qua lì là adesso ora oggi ieri domani mattina stamattina
pomeriggio sera notte settimana ore ultime ultimo ultima ancora già anche solo molto troppo
più meno ciao grazie buongiorno buonasera buonanotte mille favore sala sale stanza stanze
edificio edifici piano piani persone gente aria umidità temperatura livello livelli sensore
sensori ufficio scrivania cucina mensa riunioni riunione pieno piena vuota vuote vuoto libera
libere libero rumore caldo freddo secca poesia barzelletta storia favola canzone ricetta tempo
libro musica qualcosa qualcuno tutti tutte tutto due scrivi scrivimi raccontami racconta
mostrami mostra dammi dimmi spiegami spiega aiutami aiuta elenca confronta riassumi traduci
cantami consigliami metti fammi significa parli italiano capitale scollegato prima sei fa
divertente affollato dentro avvisi
";

const DUTCH: &str = "
de het een van in op aan met voor naar uit bij door over onder tussen sinds tot tijdens na en
of maar niet geen ja nee is zijn was waren wordt worden werd heeft hebben had kan kun kunt
kunnen zou zouden moet wil wilt mag ik je jij u hij zij ze we wij jullie me mij mijn jouw jou
uw ons onze hun dit dat deze die er hier daar wat wie waar wanneer waarom hoe hoeveel welke
welk nu vandaag gisteren morgen ochtend vanochtend middag vanmiddag avond nacht week uur
afgelopen laatste nog al ook alleen heel erg te meer minder alsjeblieft alstublieft bedankt
dank hallo goedemorgen goedemiddag goedenavond welterusten dag doei kamer kamers ruimte ruimtes
zaal zalen gebouw gebouwen verdieping verdiepingen mensen personen lucht luchtvochtigheid
vochtig temperatuur waarde waarden bezetting sensoren kantoor bureau keuken kantine
vergaderzaal vergaderzalen vergaderruimte vol leeg lege vrij druk lawaaierig rustig warm koud
droog benauwd bedompt gedicht grap verhaal liedje recept weer boek muziek iets iemand alle
allemaal beide twee schrijf vertel laat zien geef toon leg help vergelijk vat samen zet vertaal
zing raad betekent spreek nederlands hoofdstad grappigs bijgewerkt staan zitten gaat mee wel
rustigst warmste meldingen
";

const PORTUGUESE: &str = "
o a os as um uma uns umas de do da dos das em no na nos nas ao à aos às com por pelo pela
para sem sobre entre desde até durante e ou mas não sim é são está estão estás estou era foi
foram há havia tem têm ter faz fica ficam pode posso podes podia podias quero gostaria me te
se lhe meu minha meus minhas teu tua seu sua nosso nossa eu tu ele ela você vocês que quê quem
qual quais quando onde como porque porquê quanto quanta quantos quantas este esta isto estes
estas esse essa isso aqui ali lá agora hoje ontem amanhã manhã tarde noite semana horas hora
últimas último última ainda já também só muito muita demasiado mais menos olá obrigado obrigada
bom boa dia dias adeus favor sala salas quarto edifício edifícios andar andares pessoas gente
ar umidade humidade temperatura nível níveis sensores escritório secretária cozinha cantina
reunião reuniões cheio cheia vazia vazias vazio livre livres barulho calor frio seco abafado
poema piada história canção receita tempo livro música algo alguém alguma algum todos todas
tudo dois duas escreve conta mostra dá diz explica ajuda lista compara resume traduz canta
recomenda põe significa falas português capital desligado anterior estacionamento átrio
lotada lotado engraçado alertas atualizado fazer saber sabes painel
";
