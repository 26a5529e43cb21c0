"""The changing facts of the assistant-log benchmark: topics, their values, how they are said.

Each ``Topic`` holds the ways a user states a fact (``state``), says it again
later (``restate``), changes it (``update``, with ``{old}`` and ``{new}``), and
the questions an agent would ask about it now (``ask``) and before a change
(``ask_before``). Questions are written in other words than the statements:
no content word of a topic's questions appears in its statements (the unit
test checks every generated question against its turns). ``slots`` are extra
words fixed per fact (a role, a pet's kind); pure data, no I/O. Plain facts,
appointments and relatives are in ``personal``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.assistant_log.words import (
    CARS,
    CITIES,
    COMMUTES,
    COMPANIES,
    CUISINES,
    DIETS,
    DRINKS,
    EXERCISES,
    LANGUAGES,
    PEOPLE,
    PHONES,
    ROLES,
)

SUPERSEDED = "superseded fact"
PREFERENCE = "preference update"
TEMPORAL = "temporal"
PLAIN = "plain fact"
TWO_HOP = "two-hop"
PREVIOUS = "previous value"
CATEGORIES = (SUPERSEDED, PREFERENCE, TEMPORAL, PLAIN, TWO_HOP, PREVIOUS)
"""Question categories, in report order."""
UPDATES = (SUPERSEDED, PREFERENCE, TEMPORAL)
"""Categories whose answer replaced an older fact ("newest fact first" applies)."""


@dataclass(frozen=True)
class Topic:
    """One kind of fact a user tells the assistant, and how it is asked about."""

    name: str
    category: str
    values: tuple[str, ...]
    state: tuple[str, ...]
    restate: tuple[str, ...]
    ask: tuple[str, ...]
    update: tuple[str, ...] = ()
    ask_before: tuple[str, ...] = ()
    slots: dict[str, tuple[str, ...]] = field(default_factory=dict)


HOME = Topic(
    "home",
    SUPERSEDED,
    CITIES,
    state=(
        "I've been renting a little flat in {v} for about three years now.",
        "We're in {v}, ten minutes from the old harbour, and the summers are lovely.",
        "Our apartment in {v} is tiny but I adore the neighbourhood.",
        "I came to {v} for university and never left.",
        "The rent in {v} keeps going up, our landlord raised it again in March.",
    ),
    restate=(
        "The trams in {v} were packed again this morning.",
        "Our neighbours here in {v} invited us over for dinner on Saturday.",
        "Autumn in {v} is gorgeous, the park by our flat is all orange.",
    ),
    update=(
        "We finally moved to {new} last month, the boxes are still everywhere.",
        "Goodbye {old}! The van dropped our furniture off in {new} yesterday.",
        "I left {old} in the spring; we've unpacked in {new} and I already love it.",
        "Big news: we swapped {old} for {new}, and the rent is half of what we paid.",
        "Signed a lease in {new} today, so that's the end of {old} for us.",
    ),
    ask=(
        "Which city does the user live in now?",
        "Where is the user residing at present?",
        "What town does the user currently call home?",
        "In what place is the user's household located at the moment?",
    ),
    ask_before=(
        "Which city did the user live in before?",
        "Where was the user residing previously?",
        "What town did the user call home before relocating?",
    ),
)

EMPLOYER = Topic(
    "employer",
    SUPERSEDED,
    COMPANIES,
    state=(
        "I'm a {role} at {v}, mostly remote, which suits me.",
        "Three years at {v} this month, still doing {role} stuff.",
        "My team at {v} ships the mobile app, and I'm their {role}.",
        "I joined {v} as a {role} straight after graduating.",
    ),
    restate=(
        "Another all-hands at {v} today, two hours of slides.",
        "The canteen at {v} finally has decent vegetarian options.",
    ),
    update=(
        "Today was my last shift at {old}; on Monday I start at {new}.",
        "I accepted the offer from {new}, so I handed in my notice at {old}.",
        "After four years at {old} I'm off to {new}, same {role} role, shorter commute.",
        "First week at {new} done; leaving {old} was the right call.",
    ),
    ask=(
        "Who is the user's employer now?",
        "Which company does the user currently work for?",
        "What organisation has the user on its payroll at present?",
        "Where is the user employed these days?",
    ),
    ask_before=(
        "Which company did the user work for before?",
        "Who employed the user previously?",
        "What was the user's former employer?",
    ),
    slots={"role": ROLES},
)

MANAGER = Topic(
    "manager",
    SUPERSEDED,
    PEOPLE,
    state=(
        "My boss {v} wants the quarterly numbers by Friday.",
        "{v}, who runs our team, approved my holiday request.",
        "I had my one-to-one with {v} and got really good feedback.",
    ),
    restate=("{v} cancelled our weekly catch-up again, third time in a row.",),
    update=(
        "{old} moved to another department, so {new} is my boss from now on.",
        "Our team got reshuffled and I answer to {new} instead of {old}.",
        "{old} retired last week; {new} is taking over the team.",
    ),
    ask=(
        "Who is the user's line manager at present?",
        "Who supervises the user currently?",
        "To whom does the user report these days?",
    ),
    ask_before=(
        "Who supervised the user before the reorganisation?",
        "Who was the user's line manager previously?",
    ),
)

CAR = Topic(
    "car",
    SUPERSEDED,
    CARS,
    state=(
        "We picked up a second-hand {v} so weekend trips are easier.",
        "The {v} needs new tyres before winter.",
        "Our {v} failed its inspection because of a brake light.",
    ),
    restate=("Filled up the {v} this morning and it cost a small fortune.",),
    update=(
        "We sold the {old} and bought a {new}, it's so much quieter.",
        "Traded in the {old} for a {new} yesterday.",
        "The {old} finally died, so we went for a {new}.",
    ),
    ask=(
        "What vehicle does the user drive now?",
        "Which automobile does the user's family own at present?",
        "What car is parked in the user's driveway these days?",
    ),
    ask_before=(
        "What vehicle did the user drive before?",
        "Which car did the user's family have previously?",
    ),
)

PHONE = Topic(
    "phone",
    SUPERSEDED,
    PHONES,
    state=(
        "My {v} battery barely lasts until lunch.",
        "I cracked the screen of my {v} again.",
        "Took all the holiday photos on my {v}, the camera is decent.",
    ),
    restate=("The {v} keeps autocorrecting my surname, it's hilarious.",),
    update=(
        "Finally replaced the {old} with a {new}, the battery is a dream.",
        "Said goodbye to my {old}; the {new} arrived this morning.",
        "Switched from the {old} to a {new} because the charging port broke.",
    ),
    ask=(
        "Which handset is the user carrying now?",
        "What mobile device does the user have at present?",
        "What smartphone is the user on these days?",
    ),
    ask_before=(
        "What handset did the user carry before?",
        "Which mobile device did the user use previously?",
    ),
)

DRINK = Topic(
    "drink",
    PREFERENCE,
    DRINKS,
    state=(
        "I can't function before my first {v} of the morning.",
        "Honestly my personality is about sixty percent {v}.",
        "I get through three cups of {v} before noon.",
    ),
    restate=(
        "Made a big pot of {v} and it's already gone.",
        "The {v} at the new café round the corner is excellent.",
    ),
    update=(
        "I've cut out {old} completely; it's only {new} for me now.",
        "No more {old}, the doctor told me to switch, so I'm on {new}.",
        "I swapped my {old} habit for {new} and I sleep so much better.",
    ),
    ask=(
        "What beverage does the user start the day with now?",
        "What does the user like to sip these days?",
        "Which drink does the user prefer at present?",
    ),
    ask_before=(
        "What beverage did the user start the day with before?",
        "Which drink did the user prefer before the change?",
    ),
)

DIET = Topic(
    "diet",
    PREFERENCE,
    DIETS,
    state=(
        "I've been {v} for a couple of years now and feel great.",
        "Cooking {v} for the whole family takes planning, but it's worth it.",
        "Just so you know, I'm strictly {v}.",
    ),
    restate=("Found a great {v} cookbook at the market on Sunday.",),
    update=(
        "I dropped the {old} thing and went {new} in January.",
        "Quick update: I'm not {old} anymore, I've gone {new} on my doctor's advice.",
        "After the blood test I switched from {old} to {new}.",
    ),
    ask=(
        "What eating regime does the user follow at present?",
        "What kind of meals suit the user now?",
        "Which nutrition plan does the user stick to these days?",
    ),
    ask_before=(
        "What eating regime did the user follow before?",
        "Which nutrition plan did the user use to stick to?",
    ),
)

EXERCISE = Topic(
    "exercise",
    PREFERENCE,
    EXERCISES,
    state=(
        "Doing {v} three times a week is what holds me together.",
        "I never miss my {v} sessions on Tuesday and Thursday evenings.",
        "I signed up for a {v} club near the office.",
    ),
    restate=("Did a long {v} session this morning and I'm wrecked.",),
    update=(
        "My knee can't take {old} anymore, so I've taken up {new}.",
        "I quit {old} and joined a {new} group instead, much more social.",
        "Gave up {old} after the injury; {new} is my thing now.",
    ),
    ask=(
        "Which physical activity does the user do for fitness now?",
        "How does the user keep in shape these days?",
        "What sport is the user into at present?",
    ),
    ask_before=(
        "Which sport did the user do before?",
        "How did the user keep in shape previously?",
    ),
)

LANGUAGE = Topic(
    "language",
    PREFERENCE,
    LANGUAGES,
    state=(
        "I practise {v} on the train with flashcards every morning.",
        "My {v} tutor says my pronunciation is getting better.",
        "I've got a {v} exam in June, so evenings are for grammar.",
    ),
    restate=("Ordered a {v} novel to practise my reading.",),
    update=(
        "I gave up on {old}; I'm doing {new} lessons now because of the trip.",
        "Dropped {old} and started {new} classes with a colleague.",
        "Swapped my {old} app for {new}, we're spending next summer abroad.",
    ),
    ask=(
        "Which foreign tongue is the user studying now?",
        "What language is the user learning at present?",
    ),
    ask_before=(
        "Which language was the user learning before?",
        "What foreign tongue did the user study previously?",
    ),
)

CUISINE = Topic(
    "cuisine",
    PREFERENCE,
    CUISINES,
    state=(
        "If I could have one thing forever it would be {v}.",
        "Friday night is {v} night in our flat, no exceptions.",
        "I'd cross town for a good bowl of {v}.",
    ),
    restate=("Tried a new {v} place near the station, ten out of ten.",),
    update=(
        "I used to order {old} every Friday, but lately I'm obsessed with {new}.",
        "Honestly I'm over {old}; {new} is the new Friday ritual.",
        "Tried {new} last weekend and it has replaced {old} in my heart.",
    ),
    ask=(
        "What is the user's favourite dish now?",
        "Which meal does the user crave most at present?",
        "What food does the user enjoy most these days?",
    ),
    ask_before=(
        "What was the user's favourite dish before?",
        "Which meal did the user crave most previously?",
    ),
)

COMMUTE = Topic(
    "commute",
    PREFERENCE,
    COMMUTES,
    state=(
        "I get to the office {v}, it takes about twenty minutes.",
        "Going in {v} means I can read on the way.",
        "Rain or shine I go in {v}.",
    ),
    restate=("Going in {v} was lovely this morning, the sun was out.",),
    update=(
        "I stopped going in {old}; I go {new} now and it's quicker.",
        "Since the strike I've switched from going {old} to going {new}.",
    ),
    ask=(
        "How does the user travel to their workplace now?",
        "What mode of transport brings the user to the job at present?",
    ),
    ask_before=("How did the user travel to their workplace before?",),
)

CHANGING = (HOME, EMPLOYER, MANAGER, CAR, PHONE, DRINK, DIET, EXERCISE, LANGUAGE, CUISINE, COMMUTE)
"""Topics whose value the user later changes (superseded facts and preferences)."""
