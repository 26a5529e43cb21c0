"""The filler of the assistant-log benchmark: greetings, acknowledgements, small talk,
task chatter, and "traps" (pure data).

Traps are user lines that carry the questions' words ("city", "work",
"drive", "breakfast", "shape", "date"...) or a fact about someone else
("my friend just moved to ..."), so keyword-only search and a careless vector
both find something that is not the answer. ``{slot}`` names are filled by
the generator from ``SLOTS`` (or the fact word lists, minus the user's own).
"""

from __future__ import annotations

GREET_USER = (
    "Morning!",
    "Hi again",
    "hey, you there?",
    "Good evening!",
    "Hello hello",
    "Back again with more questions, sorry!",
    "Hi! Quick one today.",
    "hiya",
    "Good afternoon, I need a hand with a few things.",
    "Hey, it's me again.",
)
GREET_ASSISTANT = (
    "Good morning! What can I do for you today?",
    "Hi! How can I help?",
    "Welcome back! What are we looking at today?",
    "Hello! Ready when you are.",
    "Hey! What's on your mind?",
    "Hi there, happy to help with whatever you need.",
)
ACK_USER = (
    "ok thanks",
    "thanks!",
    "perfect, thank you",
    "great",
    "cool",
    "got it",
    "haha nice",
    "sounds good",
    "ok 👍",
    "thank you so much!",
    "makes sense",
    "awesome, cheers",
    "yes please",
    "ok",
    "lol",
    "nice one",
    "amazing, thanks",
    "right, ok",
)
ACK_ASSISTANT = (
    "You're welcome!",
    "Happy to help!",
    "Anytime.",
    "Glad that helped!",
    "No problem at all.",
    "You got it.",
    "Of course!",
)
BYE_USER = (
    "That's all for today, bye!",
    "gotta run, talk later",
    "ok I'm off, thanks for the help",
    "Thanks, see you tomorrow",
    "bye for now",
    "I'll come back to this later, thanks!",
)
BYE_ASSISTANT = (
    "Have a great evening!",
    "Take care, talk soon!",
    "Bye! Good luck with everything.",
    "See you next time!",
    "Enjoy the rest of your afternoon.",
)
SMALL_TALK = (
    ("It's so hot today, I can barely think.", "Stay hydrated! Maybe keep the curtains closed."),
    ("Ugh, Mondays.", "Hang in there, the week gets better."),
    ("Rough night, the neighbours had a party until 3.", "Oh no, I hope you catch up on sleep."),
    ("I'm back, sorry, got pulled into a meeting.", "No worries, take your time."),
    ("The weather is miserable again.", "Sounds like a good evening for a film."),
    ("Just finished a huge pile of laundry.", "That's a satisfying feeling!"),
    ("I think I'm coming down with a cold.", "Sorry to hear that. Rest up and drink water."),
    ("I'm so tired today.", "That sounds exhausting. Be gentle with yourself."),
    ("Guess what, it's snowing!", "How exciting! Enjoy it."),
    ("My internet keeps dropping out.", "That's annoying. Restarting the router sometimes helps."),
    ("Finally Friday!", "Any nice plans for the weekend?"),
    ("I burnt the toast again haha", "Happens to the best of us!"),
)
TASKS: tuple[tuple[str, str], ...] = (
    (
        "Can you draft a short email to {colleague} asking to move our {meeting} to next week?",
        "Here's a draft: \"Hi {colleague}, would it be possible to move our {meeting} to next "
        'week? Let me know what suits you. Thanks!"',
    ),
    (
        "Summarise this article about {news} in three bullet points.",
        "Here's a summary: the piece covers {news}, what experts are worried about, and what "
        "might happen next.",
    ),
    (
        "Give me a packing list for a weekend in {place}.",
        "For a weekend in {place}: comfortable shoes, a light jacket, chargers, toiletries and a "
        "reusable water bottle.",
    ),
    ("What's a good name for a {thing}?", "A few ideas: Northstar, Little Fern or Copper Kettle."),
    (
        "Translate 'where is the train station' into {tongue}.",
        "Here it is in {tongue}, with a phonetic guide so you can say it out loud.",
    ),
    (
        "Help me write a birthday message for {colleague}.",
        'How about: "Happy birthday, {colleague}! Wishing you a year full of good things."',
    ),
    (
        "Can you explain what {concept} means in simple terms?",
        "Put simply, {concept} is easiest to see with an everyday example, so here is one with "
        "small numbers.",
    ),
    (
        "Any ideas for a quick dinner with {ingredient} and {ingredient2}?",
        "You could do a stir-fry with {ingredient} and {ingredient2}, garlic and a splash of "
        "sauce, ready in twenty minutes.",
    ),
    (
        "I need a catchy title for my presentation on {news}.",
        'How about "{news}: What Nobody Tells You"?',
    ),
    (
        "Recommend a podcast about {subject}.",
        "Try a weekly interview show about {subject}; episodes are about forty minutes.",
    ),
    (
        "Make me a to-do list: {chore}, {chore2}, and call the bank.",
        "Here's your list: 1. {chore} 2. {chore2} 3. call the bank. Want me to add deadlines?",
    ),
    (
        "Write a haiku about {season}.",
        "Soft {season} light falls / on the quiet window sill / the kettle whistles",
    ),
    (
        "Can you check this sentence for typos: 'Their going to the {meeting} tomorow.'",
        "Two fixes: 'They're going to the {meeting} tomorrow.'",
    ),
    (
        "What's the difference between a Roth IRA and a 401k?",
        "The main difference is when you pay tax: contributions to one are taxed now, the "
        "other later.",
    ),
    (
        "How do I get red wine out of a carpet?",
        "Blot, don't rub: cold water, then a paste of baking soda, then vacuum when dry.",
    ),
    ("Suggest a board game for four adults.", "Codenames or Ticket to Ride are easy wins."),
    ("How long should I boil an egg for a runny yolk?", "About six minutes from boiling."),
)
# Conversions computed once (the assistant's answer is right).
TASKS += tuple(
    (f"How many grams are in {n} ounces?", f"{n} ounces is about {round(n * 28.35)} grams.")
    for n in range(2, 17)
) + tuple(
    (f"Convert {n} miles to kilometres please.", f"{n} miles is about {n * 1.609:.1f} km.")
    for n in range(3, 30, 2)
)
SLOTS = {
    "meeting": (
        "weekly sync",
        "budget review",
        "design crit",
        "sprint planning",
        "quarterly review",
        "kick-off call",
        "retro",
    ),
    "news": (
        "remote work",
        "housing prices",
        "electric scooters",
        "four-day weeks",
        "AI regulation",
        "water shortages",
        "city cycling lanes",
        "school lunches",
    ),
    "thing": (
        "houseplant",
        "newsletter",
        "sourdough starter",
        "fantasy football team",
        "book club",
        "family group chat",
        "camper van",
    ),
    "concept": (
        "compound interest",
        "a VPN",
        "inflation",
        "an index fund",
        "carbon offsets",
        "a mortgage offset account",
        "cloud storage",
    ),
    "ingredient": (
        "chickpeas",
        "spinach",
        "leftover rice",
        "mushrooms",
        "halloumi",
        "sweet potatoes",
        "tinned tomatoes",
        "broccoli",
    ),
    "subject": ("history", "urban design", "economics", "psychology", "space", "true crime"),
    "chore": (
        "renew the parking permit",
        "book the plumber",
        "return the library books",
        "buy a birthday card",
        "fix the bike light",
        "sort the recycling",
    ),
    "season": ("winter", "spring", "autumn", "summer"),
}
TRAPS = (
    "The city council finally fixed the potholes on our street.",
    "Work has been brutal this week, three deadlines at once.",
    "Our company newsletter is full of typos again.",
    "I watched a live recording of an old Queen concert last night.",
    "The drive back from the coast took four hours.",
    "Breakfast today was just toast, I was running late.",
    "I need a break from screens, maybe a walk around town later.",
    "A colleague says the new salary bands come out in May.",
    "Honestly I'm in terrible shape after the holidays.",
    "The job market looks rough right now.",
    "I spent the whole afternoon reorganising the spare room.",
    "The dog next door barked all night, I barely slept.",
    "Date night went well, we finally tried the new place by the river.",
    "I've lost track of time today, it's already six.",
    "My friend {friend} just moved to {city}, she loves it there.",
    "A colleague swears by {drink} but I can't stand it.",
    "My neighbour drives a {car} and never stops talking about it.",
    "{friend} got promoted to team lead at {company}.",
    "{friend} started {exercise} and won't shut up about it.",
    "I keep getting ads for {cuisine} delivery, the algorithm knows me too well.",
    "My nephew wants to learn {tongue} because of a video game.",
    "{friend} is thinking about going {diet}, I'm curious how long it lasts.",
    "Someone on the bus was playing {instrument} music really loudly.",
    "There's a {city} food festival in the square this weekend.",
    "My little niece calls every animal at the zoo a doggy.",
    "Our household bills went up again, I need to look at the budget.",
    "I'd love to travel more next year, maybe a long trip in the autumn.",
    "The office plants are dying, nobody waters them.",
    "A reminder popped up about a meeting I don't remember scheduling.",
    "The mobile signal in our kitchen is terrible.",
    "My doctor's surgery changed its opening hours again.",
    "The kids' school sent home another form to sign.",
)
FACT_REPLIES = (
    "Noted, I'll keep that in mind.",
    "That's a big change! How are you finding it?",
    "Good to know, thanks for telling me.",
    "Oh nice, that sounds lovely.",
    "Got it, I'll remember that for future suggestions.",
    "Thanks for the update!",
    "Oh, interesting! Let me know if I can help with anything around that.",
    "Understood.",
    "That's great to hear.",
    "Ah, makes sense.",
)
