"""The usual members of a kind a question asks for: "instruments" -> piano, guitar, violin...

Pure module: no I/O. "What instruments does Melanie play?" is answered by "I've been
playing my clarinet", which shares no word with the question, and a static vector of
the question sits far from it too. When the question asks for a kind
(``kinds.asked_kind``) that is one of a few general ones (hobbies, sports, martial
arts, instruments, pets, desserts, foods, drinks, children, relatives, events, art,
games, genres, vehicles, subjects, plants, clothes, holidays), ``members``
gives that kind's common members, everyday English, the same for every conversation:
the search adds them to the keyword terms (scored below the question's own words, as
synonyms) and to the text of its static query vector, and the memories that name one
(``mentions_member``) rank a little higher (``rerank.named_things``). A kind as broad
as "places" has no usual members: it is left out. Measured on LoCoMo
(docs/decisions.md).
"""

from __future__ import annotations

import functools
import re

from hindsight_redis.language.kinds import AskedKind
from hindsight_redis.language.speaker import strip_speaker_label

_HOBBIES = (
    "hiking camping swimming running jogging walking biking cycling climbing kayaking "
    "fishing surfing skiing skating sailing gardening painting drawing pottery knitting "
    "sewing woodworking crafts photography cooking baking reading writing poetry dancing "
    "singing music yoga meditation gaming chess puzzles volunteering traveling birdwatching "
    "picnics museums concerts movies"
)
_SPORTS = (
    "running jogging swimming cycling biking hiking climbing yoga pilates stretching "
    "kickboxing boxing weightlifting weights strength cardio aerobics crossfit rowing tennis "
    "basketball soccer football baseball volleyball golf hockey skiing surfing skating "
    "dancing karate"
)
_MARTIAL_ARTS = (
    "karate judo taekwondo kickboxing boxing jiu-jitsu kung-fu aikido muay-thai wrestling mma "
    "capoeira krav-maga tai-chi fencing"
)
_INSTRUMENTS = (
    "piano guitar violin viola cello bass drums flute clarinet saxophone trumpet trombone "
    "tuba harp ukulele banjo harmonica keyboard oboe accordion mandolin organ"
)
_ANIMALS = (
    "dog puppy pup cat kitten kitty turtle tortoise fish goldfish bird parrot hamster "
    "rabbit bunny snake lizard gecko horse pony ferret chickens"
)
_DESSERTS = (
    "cake cupcakes pie cookies brownies cobbler crumble tart pudding sundae gelato "
    "ice-cream muffins pastry donuts cheesecake chocolate candy custard mousse fudge"
)
_FOODS = (
    "soup salad pasta pizza stew curry tacos burrito sandwich burger bread rice noodles "
    "sushi chili casserole lasagna steak chicken roast barbecue pancakes omelette "
    "dumplings cake pie cookies"
)
_DRINKS = "coffee tea juice smoothie lemonade soda water wine beer cocktail milk latte cocoa"
_CHILDREN = "son daughter sons daughters boy girl baby toddler twins"
_RELATIVES = (
    "mother mom father dad parents sister brother grandmother grandma grandfather grandpa "
    "aunt uncle cousin wife husband son daughter niece nephew"
)
_EVENTS = (
    "party festival concert parade fair conference workshop seminar fundraiser march rally "
    "race marathon tournament competition contest exhibition show ceremony meeting gala "
    "wedding reunion"
)
_ART = (
    "painting drawing sketch sculpture pottery ceramics photography mural collage "
    "watercolor portrait abstract landscape calligraphy poetry"
)
_GAMES = (
    "chess checkers monopoly scrabble catan poker cards puzzle console rpg shooter strategy "
    "multiplayer"
)
_GENRES = (
    "fantasy mystery romance thriller horror comedy drama documentary sci-fi adventure "
    "biography historical jazz rock pop classical country hip-hop"
)
_VEHICLES = "car truck van motorcycle bike bicycle scooter boat suv"
_SUBJECTS = (
    "math science history english art music writing poetry biology chemistry physics "
    "literature coding programming cooking dance languages"
)
_PLANTS = (
    "roses tulips sunflowers daisies lilies orchids lavender ferns succulents cactus herbs tomatoes"
)
_CLOTHES = (
    "dress shirt jacket coat sweater hoodie jeans shoes sneakers boots hat scarf necklace "
    "bracelet ring earrings"
)
_HOLIDAYS = "christmas thanksgiving halloween easter hanukkah diwali valentine's new-year's"

_BY_HEAD: dict[str, str] = {
    **dict.fromkeys(
        (
            "activity",
            "hobby",
            "interest",
            "pastime",
            "passion",
            "outdoor activity",
            "leisure activity",
        ),
        _HOBBIES,
    ),
    **dict.fromkeys(
        ("sport", "exercise", "workout", "physical activity", "fitness activity"), _SPORTS
    ),
    "martial art": _MARTIAL_ARTS,
    "instrument": _INSTRUMENTS,
    **dict.fromkeys(("pet", "animal"), _ANIMALS),
    **dict.fromkeys(("dessert", "sweet", "treat", "pastry", "baked good"), _DESSERTS),
    **dict.fromkeys(("food", "dish", "meal", "recipe", "cuisine", "snack"), _FOODS),
    **dict.fromkeys(("drink", "beverage"), _DRINKS),
    **dict.fromkeys(("child", "kid"), _CHILDREN),
    **dict.fromkeys(("family member", "relative", "sibling"), _RELATIVES),
    "event": _EVENTS,
    **dict.fromkeys(("art", "artwork", "art form", "craft"), _ART),
    **dict.fromkeys(("game", "board game", "video game"), _GAMES),
    "genre": _GENRES,
    "vehicle": _VEHICLES,
    **dict.fromkeys(("subject", "class", "course", "lesson"), _SUBJECTS),
    **dict.fromkeys(("flower", "plant"), _PLANTS),
    **dict.fromkeys(("clothes", "clothing", "outfit", "accessory"), _CLOTHES),
    "holiday": _HOLIDAYS,
}
"""A kind's head (singular; one or two words) -> its common members, space-separated."""

_IRREGULAR = {"children": "child", "clothes": "clothes", "classes": "class"}
_WORDS = re.compile(r"[a-z][a-z'’-]*")


def singular(word: str) -> str:
    """``word`` (lowercase) in the singular, by the regular English endings: "activities"
    -> "activity", "dishes" -> "dish", "arts" -> "art"; "children" -> "child"."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def members(kind: AskedKind | None) -> tuple[str, ...]:
    """The common members of ``kind`` ("martial arts" -> karate, judo...), its last two
    words first, then its last one; () when it is none of the known kinds."""
    if kind is None:
        return ()
    words = _WORDS.findall(kind.words.lower())
    if not words:
        return ()
    head = singular(words[-1])
    pair = f"{words[-2]} {head}" if len(words) > 1 else ""
    found = _BY_HEAD.get(pair) or _BY_HEAD.get(head, "")
    return tuple(found.split())


@functools.lru_cache(maxsize=256)
def _forms(related: tuple[str, ...]) -> frozenset[str]:
    return frozenset(f"{w}{end}" for w in related for end in ("", "s", "es"))


def mentions_member(memory: str, related: tuple[str, ...]) -> bool:
    """Whether ``memory`` (its text after the speaker label) names one of ``related``
    (``members``) as a word of its own, in the singular, plural or possessive:
    "Melanie: I play the clarinet" names a member of the instruments."""
    if not related:
        return False
    words = _WORDS.findall(strip_speaker_label(memory).lower())
    return not _forms(related).isdisjoint(w.removesuffix("'s").removesuffix("’s") for w in words)
