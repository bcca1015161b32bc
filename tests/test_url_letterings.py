"""Every lettering of e2.bucas.name's viewer, both ways (issue 46, item 2): board URLs read
in each colour order the viewer knows (`motifs_order` jef, marie, jblackwood, or its
default when absent, detected against the instance), written with an explicit
`motifs_order`; round trips on random boards of a small instance and of Eternity II; the
record boards of the viewer's list scoring their published scores with and without the
instance; bad URLs as one line and exit 2."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.boards.table import score
from e2store.cli import main
from e2store.errors import E2StoreNote
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import Instance
from e2store.instance.url import (
    DEFAULT,
    LETTERS,
    ORDERS,
    WRITE_ORDER,
    UrlError,
    board_from_url,
    board_url,
    instance_order,
    parse_url,
    read_board_url,
)
from e2store.solver.best import score_url as url_score

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"
GALLICCHIO = SHARED / "e2_gallicchio.puz"  # colours numbered as Blackwood's: jblackwood
JWORTMANN = SHARED / "e2pieces_jwortmann.txt"  # colours in the viewer's default order
needs_shared = pytest.mark.skipif(not (GALLICCHIO.is_file() and JWORTMANN.is_file()),
                                  reason=f"{SHARED} is absent")
LETTERINGS = ("default", "jef", "marie", "jblackwood")
# the lettering detection finds for a URL written in each (marie is jblackwood's table)
FOUND = {**{order: order for order in LETTERINGS}, "marie": "jblackwood"}

# sha256 of the viewer's three copies of the Eternity II set (jfbucas/eternityII-viewer @
# 0199d586, init.js `E2_PIECES`, `E2_PIECES_MOTIFS_ORDER_JEF`, `..._JBLACKWOOD`: each piece
# as its least rotation of four letters, sorted, comma-joined).
VIEWER_SETS = {
    "default": "6f19b5d05c9df9f095482f9145473c6787905d01ad96d12b019ead42b0456707",
    "jef": "969ede0f83aa090ffe8e88a9df0b85bb4019ce63c589ea17cdf7df8d82efb960",
    "jblackwood": "fe963d5581b516a30a39f2f64f3b61894a0567fdefd07f7351095a312cddfbd4",
}

# Published boards, as published (name, published score, lettering). From the viewer's list
# of known boards (jfbucas/eternityII-viewer @ 0199d586, init.js `puzzles_urls`; the MFT
# board of 2009 is there commented out), except Riotte's five-clue 464 (raphael-anjou/
# eternity2 @ d5ee166, web/src/data/known-boards.ts). All in the official orientation:
# piece 139 on cell 135 (I8).
RECORDS = [
    ("Joshua_Blackwood_470", 470, "jblackwood",
        "https://e2.bucas.name/#puzzle=Joshua_Blackwood_470&board_w=16&board_h=16&board_edges=ajr"
        "aaftjabvfafpbajefarcjablrajubafpjanefajmnabpjafebabifafsbaabfruratiouvvsiptuvewstcugwlwo"
        "uuicwpdlieiidmocipctoelecigoesccgbabcrifaootisddoudmdsggdlddgopddcluplmwlimemicswttpcehu"
        "totvhcwetbajvftratuttdchumstcgvvsdwvvdwvwuhewwluhedvlsmsdptemupwtvvdcepemjarprijatdoihlt"
        "dtmolvwomvcwwvcieesscuhssvtihshltetehwdltdhcdeighrarcjhjaoelhtileoliiosclwcssitpcscptsci"
        "cilmclshlehhslgvhcwvgppvwrafpjmbalhmmlluhimulcmimsggmpppgpmhpiovmmwpohsewhwqsvwiwvovwvqd"
        "ofafqbgbamhtguqghucmqitecglstpeclhmsevlompgtlehvgqtohievtvpmedutpfafubhfatplhgiipmqgiemd"
        "qsdpmclidsgglodegtohdvohoocsovcucmgoctikgfafiflnalqpliluqghvlddwhpdqdikgdgepkewiehodwhcc"
        "osugcuuouoegukwlefarwnqnapdhqutkdvkqtwedkqswegpgspuopihpudqchcueqgqkuousqgpmulswprarsncn"
        "ahqvckwoqqwuwdmewwvdmgttvovmtpkivcslkepkskuupsqgumsgqwsdsrajsnhfavqwhogkqukvgeowkdesothq"
        "emklhimwklklmkqtkuikqgsuigtvsdvktjanvfdnawlqdkgqlvlqgwqklsuhqqvqulimvwkpiloektkuokdckuqk"
        "dvpuqkompnajongbaqhqgqmkhqkkmkwgkhoqwqviomokvpmkoeqtmumiqcdhmkqedukwqmpkkjajpbraaqnarkja"
        "nkbajgnabqbaninabkbankjabtnajiranhnarenanwrankrarjaar&motifs_order=jblackwood"),
    ("JBlackwood+PMcGavin_469", 469, "default",
        "https://e2.bucas.name/#puzzle=JBlackwood+PMcGavin_469&board_w=16&board_h=16&board_edges="
        "adcaaendadweadhdafwdafgfaemfacqeaencafqeadofaepdaeueaeseadteaacdcnfansnnwuwshlsuwvvlgsgv"
        "mtrsqvgtntqvkkntokvkpllkulplsnhltovncacofqfangwqwwvgstgwvphtgnnprqungqmqqkwhuwokvwlwlrqw"
        "pnqrhsknvpnscadpfvcawkrvvrnkglorhuqlnvhuusuvmonpwnspouqnlkvuqmokqhwmkrphlslrdadscpcarqvp"
        "ntmqopstqrqphmorulwmnkolsntkqoqnuvgoosnqwsoqphssoggkdadgcrfavmkrmupmsthuqqwtoriqwmmrorrm"
        "trgrqrtrgtmrnlktogllsquggtnqdaftfoeaknvopgtnhhlgwushiowumnlorkmngtrktlqtmnwlkounllwougol"
        "nkpgfackelfavhnltrwhluqrsrtuwvlrlgvvmkigrwpkqlhwwokluisowquiooiqpprocaepfufanhhuwkuhqtjk"
        "tpjtloupvmjoijjmpppjhhrpkprhskppuvtkitvvrvmteabvfhcahwjhuhmwjnthjronuhhrjqphjskqpgmsrusg"
        "rhouptwhtkmtvrtkmhmrbafhcsbajwgsmsowtjisoqtjhmkqpjnmkgrjmpqgsuvpoujuwovummsotlgmmtplfabt"
        "bteagiwtomniiwpmtwvwksmwnplsrilpqwoivkvwjhukvrkhsjprgwvjppvwbaepeibawilinqwiphiqvjshmllj"
        "lkillqikovjqvijvuksikgikpnigvjnnvomjeabobjfalijjwgiiisjgsksslqjkiigqisoijuhsjosuslgoiril"
        "ijurnvijmqlvbaeqfjbajrijingrjminsutmjtrugigtommihjumsiujggjiimhgujvmijpjlthjeaetbdaaidad"
        "gcadidactcadrbacgbabmdabufadubafjbabhcabvbacpcabhbaceaab&board_types=bccccccccccccccbcdd"
        "ddddddddddddccddddddddddddddccddddddddddddddccddddddddddddddccddddddddddddddccdddddddddd"
        "ddddccddddddddddddddccddddddddddddddccddddddddddddddccddddddddddddddccddddddddddddddccdd"
        "ddddddddddddccddddddddddddddccddddddddddddddcbccccccccccccccb"),
    ("Joshua_Blackwood_468", 468, "default",
        "https://e2.bucas.name/#puzzle=Joshua_Blackwood_468&board_w=16&board_h=16&board_edges=acd"
        "aaepcabteacsbacpcacocadtcaendaboeabgbacrbaencabveacvbadpcaabddsdapgmstmrgsutmplouomnlttk"
        "musrtowmshtrwrvmtnwlmuwswvgwwllogbachdgcamtlgrgrttqvgosnqntkskkntrwpkmmrwrmhmmpjnlsnpsph"
        "swnspopprcabpcqealhwqruhhvtkunlktkpllnkpgprhkrkmnhvrkjshvnnnshhunsknhppskbaepeteawvwthnl"
        "vkvrnkvwvlwvvppvwhhrpmkqhrphkhtvpnqgtvntqnpgnsuvpeaeueqbawsoqlgosrusgwokuvntovoknrrmoqun"
        "rhlsuuqrlgqmqttlqgwstvwlweadwbhcaourhoujusuvukjhuttpjkvrtmqlvngwqsqugrpnqmonplnkosvpnlgv"
        "vdadgckfarvwkjnnvvhunhlghplulrlsllkilwhqkuqlhnqoqnouqkqmopqrqvprqdaepfhcawushnkouuhwkgim"
        "huksismwkijjmqovjllwoorglujtrmlljrqwlrtrqeadtcrfasmtrorhmwvlrmujvsthuwhptjumhvgouwvjggsg"
        "vtopslugowovuriqodadifqeatjoqhhwjlsnhjprshjqppppjmiwpomnijovmggkopniggrinvmkrqhwmdadhese"
        "aoiiswquintmqrkgtqtjkplmtwoklnjrovvijkokviqwoiigqklqiwmuldabmelfaijjluhsjmwuhgsjwjgismki"
        "gkgikrjkgistjkqjswtqqgigtqooiuisobaeifufajsiussksujosjrijilpririlijurklqjthjljnthqwingii"
        "wommisommeafofwdailiwkvulomjvinjmpgtniwtguiowqphijijptvviijnviggjmpqgmmupfaemdcaaidacufa"
        "djbafjbabtfabtdafofadhbafjfabvcafnfacgfafqfafubafeaab"),
    ("Louis_Verhaard_467", 467, "default",
        "https://e2.bucas.name/#puzzle=Louis_Verhaard_467&board_w=16&board_h=16&board_edges=abeaa"
        "csbabpcafubacrfadpcaftdabtfafjbaemfaboeacvbaencafoeadofaabdendasvpnphtvuqlhlvmqpsuvhwust"
        "qqwjhhwmrmhopprvwppnspwoqwsoqnqbaeqdufaplouthjllsnhuvusuwovuwswqlhwhjummlljwvvlrnkvpgnnw"
        "vjgmtrveadtfqfaovjqjnnvnsnnuhlsmorhsujohhruunhhlqttvvitkvwvntovjtrurwhtdafwfhbajqphnouqn"
        "pmollkprqwljklqrvwkhnlvtmqniommwmsookqmrwpkokuwfackbjfapjijuoujmnlokounwuiolkvuwhqklghhq"
        "mqgmupmsrtuqpqrpjppuhsjcabhfhcaiqphunrqlktnuvtkijvvvomjqtjohustqrlupnqrtkknqtjkpjttshvjb"
        "achcrbaphkrrphhtwhptwvwvwlwmulwjsiusphslmtpqhwmkprhjnmptqvnvprqcacpbteakvrthunvhwkuvlrwl"
        "wollmnwijjmhukjtmsuwuhmrhoumkqhvkokrvmkcafvepcarsjpntkskmttrwmmoklwnhskjnthkpgnskpphvrko"
        "knvqjskovmjmujvfafucnfajronkmnrtrsmmorrlugosgrutrkgglorplulrlslnkolsmwkmsomjgisfafgfqeao"
        "snqnplsstoprqrtgtnqrgrtkoggoiqouksissskoiiswquioriqilirfaelepdanigpllkiogllringnjmirijjg"
        "gjiqiigsouislgoijjlurijilpriwileadwdhdagimhkkgilqikngwqmtlgjistjnviiomnuvgogsgvjwgsinqwp"
        "gtniiwgdadidgdampqggmspiwpmwvgwlgvvsqugvgtqmkiggrjkgtmrgigtqwoitgiwwstgdadsdcaaqeacseaep"
        "baegbabveabueaeteaeibaejbabmdabgcadocacidactcaddaac&board_pieces=00202401105702303105601"
        "3052039010025040053030001041240126129219250136251104116243247239245235045035211106112254"
        "2462551351091672212030770992320340551751692331131151711021032131602062411781250600501082"
        "3422619121516519511822815222919319620201700814218021019015420512106308322525324817312200"
        "6051105238200201144182170130218237183166179131015022111101120256222220161124209134110168"
        "2422490200122041281332162072081391272301171191141881940590431741981862231841231070761921"
        "3218717717218105801817618523122707808709507121221418919722406804905423621724425209308606"
        "2155162199137164156146038044081148070084150140061082158079138143149147036028067066145097"
        "0751591411530800880891510920650290270730741631000960900940720850910641570690980320040210"
        "46042005014048047037007009026019016033003"),
    ("Benjamin_Riotte_464", 464, "default",
        "https://e2.bucas.name/#puzzle=Eternity2&board_w=16&board_h=16&board_edges=adcaaendaetead"
        "teadsdacidabpcabjbaepbadweadgdaepdacrbadpcadidaabdcpcansvptgwstgigsgvgikkgppskjnmppgtnwq"
        "nggqmqpqgmrpnqpvwpitvveabtcocavntowlmniwilvvlwkokvsknhmttkkkntnvokmkrvgrjktusrwswuvijvba"
        "eicsbatjisminjiwgilrqwkqmonqoqtjoqnvijomjvrnkvjronsmtrwksmjuoueacqbmdaiommnpmognkpqgtnms"
        "pgommsnlomiriljttpksntowmstwvwptwhopstcaepdgcamtlgmsutkqjstjkqpjijmlljoglliwtgtqqwntmqmr"
        "gtvwkroklwssskeaescvbalrwvusgrjprskrwpilprlkpllqjkttlqqvntmjovgisjklqilwolsoqweabobgbawv"
        "jggtqvrqrtwoiqppropjppjrijluqrnkouolnksnplqwinokuwqhmkbachbveajnnvqosnrgloimhgrwmmpmiwij"
        "jmqovjoiqongripnigiomnuvgomtrvcadtencansnnsphslmtphmrmmupmisoujwgsvwlwquiwrijuigqimkiggt"
        "rkrwhtdafwcnfanpgnhkrptnlkrqunpqrqoriqgrtrlslriuksjsiuqugsiowurrmohkprfackfufagolurhmols"
        "uhuvpsrkhvillkthjllghhkoggiisoggjiwwvgmqhwphjqcabhfqealhwqmwuhushwpwnshqkwlhuqjnthhlsngo"
        "slsujojtruvphthiqpjjlibafjelfawmulujvmhhwjnlvhkvulusuvthussjuhshvjjumhrhouhrphqvprlgvvfa"
        "fgfhcaunhhvhunwkuhvrtkuhhrukjhuvtkuwovvkvwmnrkouqnplouplulvmqlfaemcdaahdadufadubaftfabhb"
        "afjfabtdafofadvcafrfacqfafoeafueaeqbaeeaab"),
    ("Clues", 0, "jef",
        "https://e2.bucas.name/#puzzle=Clues&board_w=16&board_h=16&board_edges=aaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaargouaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaartrjaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaavddoaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaajdsoaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaafsknaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa&board_pieces=000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000002080000000000000000000"
        "0000000000025500000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000013900000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000001810000000000000000000"
        "0000000000024900000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000&motifs_order=jef"),
    ("2009-05-17_MFT", 438, "jef",
        "https://e2.bucas.name/#puzzle=2009-05-17_MFT&board_w=16&board_h=16&board_edges=awqaawtwa"
        "mrwaidmaqniampqaibmaefiaiseamdiawjmaekwawreaeuwaebeaaieqkqatbckrsrbdhrsnjthppnjbnrpfjuns"
        "bljdcfbjnpckplnrfgpuhrfbhvhiaihqnmacudnrgourojgtcoonhgcrtbhufctlrpffjvrptdjlkktgjgkrtrjv"
        "jdtiamjmbwadvtbophvdlhnvholgrcgbhvrcgjhpprdvtdhdrhtkksrgobkrjpodjcjmamjwpwatluphbnlnsobo"
        "lnschhlrrshjvcrrvgvdbbktupgnbnhblobpsnlclusmaqlwbqauglbnrsgotcrnbjtnjdbkovrcnnovuhnbfsup"
        "olfnhbookfhntdkukgtqaikqumalcjusubccjfuunlobnfnvgvnnfrghfofugcolkggkdkkfkpdduokgspuiaqsm"
        "feajhtfbukhfcfuvvtcfcnvvfccrcvfodscctjdgngtgjfnltvjorltpkbrqawkeuqatkruknckfkfntjsknvdjc"
        "oovvddossvdjtjsghctfvvhvrhvljprbotjwaioqfearvufcouvfprosdtpdnvdopondgbpvddgjopdcukovhkuh"
        "dvhpjldtprjiaqpeteauuutusdurlnstttlsodconroblsnsrgrpbskssgrknplvgknlsjgrslsqamsekiaufnkd"
        "lgfnrkltublsjrcrcljsdfctobnslclgfvlpnkpkpttjtbplfdtmamficeanpocgtjpkhotbfshrbffllubfbdlb"
        "gfbchggvllhkhulthshbufhdovumaeoekqaoojkjdsooggdsofgfuboukhudvdkfkpvgcjklgrculcgsnulfsknv"
        "bsseawbqcqajshcsghsglvgfoclbghohppgdubpppjujfgprtcfcjvtuspjkutssvduwawvqwaahwawhqawvwaqc"
        "mawhmampiambeaijeaegmaeceamviaepqaitiaqdiaiwaai&board_pieces=004032060008022051013045014"
        "0520350440360410470020202442560990871021252382011701191111350970640050231762082202240710"
        "9823612116412219221225516105705615906708507220706907810406808924720911718005802812309523"
        "2194062100154147179112086186132187017033200216229253178163227084242114091073174217011018"
        "1902412341852521462150832101911731081681180250540900922351371561551571821712142181621971"
        "2003104023924324825014315213914425407908206513323000902115115313413114011610613810922608"
        "1061127136015046233169195199172223204222126221110149205206059042237165196198246202175231"
        "1881451011241301770550101151130740942511831662130700660760880931500390432251811672192280"
        "7714210521118418920324916003401908009614819307506310710312924515812824014102900302702601"
        "6030049050012048038053037006024007001&motifs_order=jef"),
]
# The official clues (cell: piece from 1): 139 on I8, 208 on C3, 255 on C14, 181 on N3,
# 249 on N14.
CLUES = {135: 139, 34: 208, 45: 255, 210: 181, 221: 249}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(r, *words: str) -> None:
    """Exit 2 and one `e2store: error: ...` line holding `words`, no traceback."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), r.exception
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: error: "), r.stderr
    assert "Traceback" not in r.output
    for w in words:
        assert w in lines[0], (w, lines[0])


def random_board(inst: Instance, rng: np.random.Generator, holes: float = 0.2) -> np.ndarray:
    """Random pieces in random rotations on the cells (joins need not match), some holes."""
    n = inst.width * inst.height
    board = rng.permutation(inst.n_pieces)[:n] * 4 + rng.integers(0, 4, n)
    board[rng.random(n) < holes] = -1
    return board


def same_board(a: np.ndarray, b: np.ndarray, inst: Instance) -> bool:
    """The same pieces on the same cells, each showing the same colours (a piece that looks
    alike in two rotations is read in the lower)."""
    table = inst.rotated_table()
    return bool(np.array_equal(a // 4, b // 4) and all(
        (table[x] == table[y]).all() for x, y in zip(a.tolist(), b.tolist(), strict=True)
        if x >= 0))


def without(url: str, key: str) -> str:
    """`url` without its parameter `key`."""
    base, frag = url.split("#", 1)
    return base + "#" + "&".join(p for p in frag.split("&") if not p.startswith(key + "="))


def quiet_read(inst: Instance, url: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", E2StoreNote)
        return read_board_url(inst, url)


@pytest.fixture(scope="module")
def e2() -> dict[str, Instance]:
    if not (GALLICCHIO.is_file() and JWORTMANN.is_file()):
        pytest.skip(f"{SHARED} is absent")
    return {"gallicchio": read_instance(GALLICCHIO), "jwortmann": read_instance(JWORTMANN)}


# -- the tables ---------------------------------------------------------------------------
def test_orders_are_letterings_that_keep_grey():
    for order, letters in ORDERS.items():
        assert sorted(letters) == list(LETTERS) and letters[0] == "a", order
        assert letters[23:] == "xyz", order  # past the viewer's 23 motifs
    assert ORDERS["marie"] == ORDERS["jblackwood"] and ORDERS[DEFAULT] == LETTERS
    assert WRITE_ORDER == "jblackwood"


@needs_shared
def test_orders_relabel_the_viewers_own_copies_of_the_set(e2):
    """Each table turns the Eternity II pieces into the viewer's own copy of the set in that
    lettering; e2_gallicchio's colour ids are jblackwood's letters, jwortmann's the
    default's."""
    inst = e2["gallicchio"]
    table = inst.rotated_table()[::4][:, (1, 2, 3, 0)]  # top right bottom left
    cells = ["".join(LETTERS[inst.colour_id(c)] for c in row) for row in table]
    for order in ("default", "jef", "jblackwood"):
        tr = str.maketrans(ORDERS["jblackwood"], ORDERS[order])
        text = ",".join(sorted(min(c[k:] + c[:k] for k in range(4))
                               for c in (x.translate(tr) for x in cells)))
        assert hashlib.sha256(text.encode()).hexdigest() == VIEWER_SETS[order], order
    assert instance_order(e2["gallicchio"]) == "jblackwood"
    assert instance_order(e2["jwortmann"]) == "default"
    assert instance_order(random_instance(4, 4, 1)) == WRITE_ORDER


# -- round trips --------------------------------------------------------------------------
@pytest.mark.parametrize("order", LETTERINGS)
def test_each_lettering_round_trips_on_random_boards(order):
    rng = np.random.default_rng(LETTERINGS.index(order))
    for seed in range(6):
        inst = random_instance(int(rng.integers(2, 7)), int(rng.integers(2, 7)), seed,
                               n_frame=int(rng.integers(1, 4)),
                               n_inner=int(rng.integers(1, 8)))
        for _ in range(4):
            board = random_board(inst, rng)
            url = board_url(inst, board, order=order)
            u = parse_url(url)
            assert u.order == (None if order == DEFAULT else order)
            got = read_board_url(inst, url)  # named, except the default (found first)
            assert same_board(got.board, board, inst)
            assert (got.order, got.detected) == (order, order == DEFAULT)
            assert board_url(inst, got.board, name=u.name, order=order) == url
            # from the colours alone, the score of the board in any lettering
            assert url_score(url)["score"] == score(inst, board).matched


@needs_shared
@pytest.mark.parametrize("order", LETTERINGS)
def test_each_lettering_round_trips_on_eternity_ii(e2, order):
    rng = np.random.default_rng(7 + LETTERINGS.index(order))
    for _ in range(3):
        board = random_board(e2["gallicchio"], rng, holes=float(rng.random()))
        urls = []
        for inst in e2.values():  # the same pieces, numbered alike, lettered apart
            url = board_url(inst, board, name="e2", order=order)
            got = read_board_url(inst, url)
            assert np.array_equal(got.board, board) and got.order == order
            urls.append(url)
        assert urls[0] == urls[1]  # one URL for one board, whichever file of the pieces


@pytest.mark.parametrize("order", LETTERINGS)
def test_the_lettering_is_detected_on_random_boards(order):
    """Without motifs_order (and without board_pieces) a URL is read in the lettering whose
    letters show a piece of the instance on every cell, and a note names it."""
    rng = np.random.default_rng(20 + LETTERINGS.index(order))
    for seed in range(6):
        inst = random_instance(int(rng.integers(3, 7)), int(rng.integers(3, 7)), 30 + seed)
        for _ in range(3):
            board = random_board(inst, rng, holes=0.1)
            url = without(board_url(inst, board, order=order), "motifs_order")
            with pytest.warns(E2StoreNote, match="read in the"):
                back = board_from_url(inst, url)
            assert same_board(back, board, inst)
            got = quiet_read(inst, without(url, "board_pieces"))
            assert (got.order, got.detected) == (FOUND[order], True)
            # identical pieces are interchangeable: the same letters, maybe other pieces
            again = parse_url(board_url(inst, got.board, order=order))
            assert again.edges == parse_url(url).edges


@needs_shared
@pytest.mark.parametrize("order", LETTERINGS)
def test_the_lettering_is_detected_on_eternity_ii(e2, order):
    rng = np.random.default_rng(40 + LETTERINGS.index(order))
    want = FOUND[order]
    for inst in e2.values():
        board = random_board(inst, rng, holes=0.5)
        url = without(without(board_url(inst, board, order=order), "motifs_order"),
                      "board_pieces")
        got = quiet_read(inst, url)
        assert (got.order, got.detected) == (want, True)
        assert np.array_equal(got.board, board)  # no two Eternity II pieces look alike


def test_e2stores_old_urls_are_still_read():
    """URLs e2store wrote before (no motifs_order, letters the colour ids) read as they
    were written: their lettering is found as jblackwood's, e2store's."""
    inst = random_instance(5, 4, 3)
    board = random_board(inst, np.random.default_rng(0))
    old = without(board_url(inst, board), "motifs_order")
    got = quiet_read(inst, old)
    assert same_board(got.board, board, inst) and got.order == "jblackwood"


# -- the published boards -----------------------------------------------------------------
@pytest.mark.parametrize("name,published,order,url", RECORDS, ids=[r[0] for r in RECORDS])
def test_published_boards_score_from_their_colours(name, published, order, url):
    assert url_score(url)["score"] == published
    u = parse_url(url)
    assert u.order == (None if order == DEFAULT else order)


def test_published_boards_score_on_the_command_line_without_instance():
    _, published, _, url = RECORDS[1]  # the 469, no motifs_order
    r = run("score", url, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["score"] == published


@needs_shared
@pytest.mark.parametrize("name,published,order,url", RECORDS, ids=[r[0] for r in RECORDS])
def test_published_boards_score_with_the_instance(e2, name, published, order, url):
    for inst in e2.values():
        got = quiet_read(inst, url)
        assert (got.order, got.detected) == (order, parse_url(url).order is None)
        assert score(inst, got.board).matched == published
        # the official orientation: 139 on I8 (cell 135) in rotation 2, as the field has it
        assert int(got.board[135]) == 138 * 4 + 2
        if name == "Clues":
            assert {c: int(v) // 4 + 1 for c, v in enumerate(got.board) if v >= 0} == CLUES
        else:
            assert (got.board >= 0).all()
    r = run("score", GALLICCHIO, url, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["score"] == published
    assert "motifs_order=jblackwood" in out["url"]
    if parse_url(url).order is None:
        assert f"read in the viewer's {order} colour order" in r.stderr


@needs_shared
@pytest.mark.parametrize("name,published,order,url",
                         [r for r in RECORDS if r[0] in ("Louis_Verhaard_467", "2009-05-17_MFT")],
                         ids=["Louis_Verhaard_467", "2009-05-17_MFT"])
def test_a_url_without_piece_numbers_gives_one_answer(e2, name, published, order, url):
    """`board_pieces` all 000 (no piece numbers, the colours alone): the score from the
    colours and the score with the instance are one answer, the board's (issue 57)."""
    u = parse_url(url)
    assert u.pieces is not None
    blank = url.replace("board_pieces=" + "".join(f"{p:03d}" for p in u.pieces),
                        "board_pieces=" + "000" * len(u.pieces))
    assert blank != url
    alone = json.loads(run("score", blank, "--json").stdout)["score"]
    with_pieces = json.loads(run("score", GALLICCHIO, blank, "--json").stdout)["score"]
    assert alone == with_pieces == published


# -- bad URLs -----------------------------------------------------------------------------
def test_bad_urls_give_one_line_and_exit_2(tmp_path):
    inst = random_instance(5, 5, 9)
    path = tmp_path / "r.e2s"
    write_e2store(inst, path)
    board = random_board(inst, np.random.default_rng(1), holes=0.0)
    good = board_url(inst, board)
    unknown = good.replace("motifs_order=jblackwood", "motifs_order=bob\x1b[2J")
    one_line_error(run("score", unknown), "motifs_order='bob\\x1b[2J'", "jef, marie and")
    one_line_error(run("score", path, unknown), "motifs_order='bob")
    with pytest.raises(UrlError, match="no colour order"):
        board_url(inst, board, order="bob")
    # letters no lettering places: `z` is no colour of the instance, in any lettering
    cell = "".join(parse_url(good).edges)[:4]
    bad = without(without(good, "motifs_order"), "board_pieces").replace(
        "board_edges=" + cell, "board_edges=" + "azza")
    one_line_error(run("score", path, bad), "in no colour order of e2.bucas.name",
                   "default: cell (0, 0)", "jblackwood: cell (0, 0)", "jef: cell (0, 0)")
    one_line_error(run("solve", path, "--fixed", bad), "in no colour order")
    # a named lettering the letters do not fit
    named = good.replace("motifs_order=jblackwood", "motifs_order=jef")
    one_line_error(run("score", path, named), "read in motifs_order=jef")
    r = run("score", bad)  # from the colours alone: any letters a-z are colours
    assert r.exit_code == 0, r.output


@needs_shared
def test_bad_eternity_ii_urls_give_one_line_and_exit_2(e2):
    url = RECORDS[1][3]  # the 469, lettered in the default
    one_line_error(run("score", GALLICCHIO, url.replace("board_edges=adca", "board_edges=abca")),
                   "in no colour order", "default: cell (0, 0): no unused piece shows 'abca'")
    one_line_error(run("score", GALLICCHIO, url + "&motifs_order=jef"),
                   "(its letters read in motifs_order=jef)")
    one_line_error(run("score", GALLICCHIO, url + "&motifs_order=Jef"), "motifs_order='Jef'")


def test_url_command_writes_each_lettering(tmp_path):
    inst = generate_instance(4, 3, 2, 3, seed=5)  # with its solution
    path = tmp_path / "r.e2s"
    write_e2store(inst, path)
    for order in LETTERINGS:
        r = run("url", path, "--motifs-order", order)
        assert r.exit_code == 0, r.output
        url = r.stdout.strip()
        assert ("motifs_order=" in url) == (order != DEFAULT)
        assert board_url(inst, inst.solution, order=order) == url
        r = run("score", path, url, "--json")
        assert r.exit_code == 0 and json.loads(r.stdout)["holes"] == 0, r.output
    assert "motifs_order=jblackwood&" in run("url", path).stdout
