"""Personal facts of the assistant-log benchmark: plain facts, appointments, relatives.

Plain facts are told once (and maybe again); an appointment is booked and
then moved (the temporal questions); a relative is named in one session and
their job told in another (the two-hop questions). Same rules as
``topics``: questions share no content word with the turns
that answer them, unless a question is marked as naming the event or the
relative as the user did. Pure data.
"""

from __future__ import annotations

from benchmarks.assistant_log.topics import PLAIN, TEMPORAL, Topic
from benchmarks.assistant_log.words import (
    ALLERGENS,
    BIRTHDAYS,
    CITIES,
    INSTRUMENTS,
    PET_KINDS,
    PET_NAMES,
    WHENS,
)

HOMETOWN = Topic(
    "hometown",
    PLAIN,
    CITIES,
    state=(
        "I grew up in a tiny village outside {v}, we had one bus a day.",
        "My parents still have the farmhouse near {v} where I spent my childhood.",
        "As a kid in {v} I spent every summer at the lake.",
    ),
    restate=("Going back to {v} for my mum's sixtieth, I haven't been since school.",),
    ask=(
        "Where is the user originally from?",
        "Which city was the user raised in?",
        "What is the user's place of origin?",
    ),
)

ALLERGY = Topic(
    "allergy",
    PLAIN,
    ALLERGENS,
    state=(
        "I found out the hard way about {v}: I ended up in A&E.",
        "Please never suggest anything with {v}, I react really badly.",
        "I carry an EpiPen everywhere because of {v}.",
    ),
    restate=("Had to send back my dinner because it had {v} in it, I can't risk it.",),
    ask=(
        "What is the user allergic to?",
        "Which substance must the user avoid for medical reasons?",
        "What triggers an allergy in the user?",
    ),
)

BIRTHDAY = Topic(
    "birthday",
    PLAIN,
    BIRTHDAYS,
    state=(
        "My birthday is on {v}, I'm thinking of a small dinner.",
        "On {v} my friends always drag me to karaoke for my birthday.",
        "Turning thirty-five on {v}, please don't remind me.",
    ),
    restate=("Only two weeks until my birthday on {v}!",),
    ask=(
        "When was the user born?",
        "On what day and month does the user get a year older?",
    ),
)

PET = Topic(
    "pet",
    PLAIN,
    PET_NAMES,
    state=(
        "We adopted a rescue {kind}, {v}, and she already rules the sofa.",
        "{v}, our {kind}, chewed through my headphone cable this morning.",
        "Taking {v} the {kind} to the park is the best part of my morning.",
    ),
    restate=("{v} figured out how to open the fridge, send help.",),
    ask=(
        "What's the name of the user's four-legged friend?",
        "What is the user's companion animal named?",
    ),
    slots={"kind": PET_KINDS},
)

INSTRUMENT = Topic(
    "instrument",
    PLAIN,
    INSTRUMENTS,
    state=(
        "I've been taking {v} lessons every Thursday evening.",
        "My neighbours must hate me, I practise the {v} after dinner.",
        "Bought a secondhand {v} and I'm completely hooked.",
    ),
    restate=("My {v} teacher says I'm ready for my first recital.",),
    ask=(
        "What musical instrument is the user learning to play?",
        "Which instrument has the user picked up as a hobby?",
    ),
)

PLAIN_TOPICS = (HOMETOWN, ALLERGY, BIRTHDAY, PET, INSTRUMENT)
"""Facts told once (and maybe restated), never changed."""

# Temporal: an appointment that gets moved. ``{event}`` is what the user calls it,
# ``{event_q}`` what the question calls it (``EVENTS``: pairs of the two).
EVENTS = (
    ("dentist appointment", "dental check-up"),
    ("car service", "garage visit"),
    ("parent-teacher meeting", "school conference about the kids"),
    ("haircut", "barber visit"),
    ("team offsite", "company away day"),
    ("physio session", "back treatment"),
    ("vet appointment for the cat", "animal doctor visit"),
    ("job interview", "hiring conversation"),
    ("boiler repair", "heating engineer visit"),
    ("passport renewal appointment", "trip to get new travel papers"),
    ("eye test", "optician visit"),
    ("book club", "reading group"),
    ("mortgage meeting at the bank", "home loan consultation"),
    ("driving lesson", "session with the instructor"),
    ("blood test", "lab work at the clinic"),
    ("piano recital", "concert performance"),
)
APPOINTMENT = Topic(
    "appointment",
    TEMPORAL,
    WHENS,
    state=(
        "My {event} is booked for {v}.",
        "Got the {event} on {v}, it's in my calendar.",
        "Reminder to self: {event} on {v}.",
    ),
    restate=("Don't let me forget the {event} on {v}.",),
    update=(
        "They pushed my {event} to {new}, so {old} is free again.",
        "The {event} moved from {old} to {new}, annoyingly.",
        "Had to rebook the {event}: it's {new} now, not {old}.",
    ),
    ask=(
        "When is the user's {event_q} now?",
        "What date and time is the user's {event_q} set for at present?",
        "For when is the user's {event_q} planned currently?",
    ),
    ask_before=("When was the user's {event_q} originally planned?",),
)

# Two-hop: a relative named in one turn, what that person does in another.
RELATIONS = (
    ("sister", "female sibling"),
    ("brother", "male sibling"),
    ("mum", "mother"),
    ("dad", "father"),
    ("husband", "spouse"),
    ("wife", "spouse"),
    ("best friend", "closest pal"),
    ("flatmate", "roommate"),
    ("partner", "significant other"),
    ("uncle", "parent's brother"),
    ("aunt", "parent's sister"),
    ("cousin", "relative"),
)
RELATIVE_JOBS = (
    "nurse",
    "architect",
    "electrician",
    "airline pilot",
    "lawyer",
    "vet",
    "primary school teacher",
    "chef",
    "firefighter",
    "pharmacist",
    "plumber",
    "software engineer",
    "midwife",
    "physiotherapist",
    "journalist",
    "carpenter",
    "police officer",
    "accountant",
    "translator",
    "paramedic",
    "baker",
    "surveyor",
)
RELATIVE_INTRO = (
    "My {rel} {name} came over for dinner last night.",
    "I'm spending Sunday with my {rel} {name}, we haven't caught up in ages.",
    "{name}, my {rel}, is visiting us next weekend.",
)
RELATIVE_JOB = (
    "{name} just qualified as a {job}, we're all so proud.",
    "{name} did a double shift again; being a {job} is exhausting.",
    "{name} finally got the {job} position after three interviews.",
)
RELATIVE_ASK = (
    "What does the user's {rel_q} do for a living?",
    "What is the profession of the user's {rel_q}?",
    "Which occupation does the user's {rel_q} have?",
)
