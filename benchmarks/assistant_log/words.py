"""Word lists of the assistant-log benchmark: the values facts take (pure data).

Large on purpose: with a few hundred cities, companies, people and dates
combined at random per seed, no fixed answer key can be memorised.
"""

from __future__ import annotations

from itertools import product

CITIES = (
    "Porto", "Lisbon", "Valencia", "Lyon", "Leeds", "Gdansk", "Utrecht", "Ghent", "Bologna",
    "Seville", "Krakow", "Tallinn", "Bristol", "Glasgow", "Dublin", "Cork", "Aarhus", "Malmo",
    "Bergen", "Turin", "Graz", "Brno", "Ljubljana", "Zagreb", "Bilbao", "Nantes", "Bordeaux",
    "Antwerp", "Rotterdam", "Leipzig", "Dresden", "Freiburg", "Basel", "Salzburg", "Innsbruck",
    "Vilnius", "Riga", "Edinburgh", "Manchester", "Montreal", "Vancouver", "Portland", "Austin",
    "Denver", "Melbourne", "Adelaide", "Wellington", "Osaka", "Kyoto", "Marseille", "Naples",
    "Palermo", "Granada", "Malaga", "Coimbra", "Braga", "Toulouse", "Strasbourg", "Heidelberg",
    "Nuremberg", "Bremen", "Hamburg", "Uppsala", "Tampere", "Trondheim", "Galway", "Belfast",
    "Cardiff", "Norwich", "Brighton", "Halifax", "Quebec", "Boulder", "Tucson", "Savannah",
    "Perth", "Hobart", "Christchurch", "Sapporo", "Fukuoka", "Busan", "Taipei", "Hanoi",
)  # fmt: skip

_FIRST = (
    "Priya", "Tomasz", "Ines", "Marco", "Aisha", "Jonas", "Sofia", "Mateo", "Hannah", "Kenji",
    "Leila", "Oskar", "Chiara", "Diego", "Freya", "Rahul", "Amara", "Lukas", "Nadia", "Emre",
    "Clara", "Felix", "Yara", "Bruno", "Ingrid", "Tariq", "Elena", "Niamh", "Pavel", "Zara",
    "Malik", "Greta", "Omar", "Lucia", "Sven", "Ayumi", "Rosa", "Declan", "Mira", "Idris",
)  # fmt: skip
_LAST = (
    "Whitfield", "Raman", "Nowak", "Ferreira", "Okafor", "Lindqvist", "Moreau", "Castillo",
    "Becker", "Tanaka", "Haddad", "Novak", "Rossi", "Kowalski", "Brennan", "Sato", "Dubois",
    "Ivanova", "Mensah", "Larsen", "Costa", "Yilmaz", "Fischer", "Gallagher",
)  # fmt: skip
PEOPLE = tuple(f"{a} {b}" for a, b in product(_FIRST, _LAST))
FIRST_NAMES = _FIRST

_COMPANY_A = ("Bright", "North", "Blue", "Iron", "Silver", "Green", "Clear", "Swift", "Quiet",
              "Lumen", "Harbor", "Cedar", "Maple", "Atlas", "Orbit", "Summit", "Nova",
              "Vertex")  # fmt: skip
_COMPANY_B = ("wave", "haven", "stone", "field", "bridge", "gate", "line", "path", "point",
              "forge", "leaf", "spark")  # fmt: skip
_COMPANY_C = ("Analytics", "Logistics", "Labs", "Health", "Software", "Media", "Robotics",
              "Insurance", "Energy", "Foods", "Studios", "Bank", "Telecom", "Pharma")  # fmt: skip
COMPANIES = tuple(f"{a}{b} {c}" for a, b, c in product(_COMPANY_A, _COMPANY_B, _COMPANY_C))

ROLES = (
    "data analyst", "product designer", "backend developer", "UX researcher", "account manager",
    "QA engineer", "marketing lead", "project coordinator", "sales rep", "copywriter",
    "support engineer", "financial controller", "HR partner", "logistics planner",
    "frontend developer", "content strategist", "security analyst", "office coordinator",
)  # fmt: skip

CARS = (
    "Toyota Corolla", "VW Golf", "Skoda Octavia", "Honda Civic", "Renault Clio", "Kia Niro",
    "Ford Fiesta", "Volvo V60", "Fiat Panda", "Peugeot 208", "Hyundai Kona", "Nissan Leaf",
    "Subaru Outback", "Mini Cooper", "Seat Ibiza", "Dacia Duster", "Citroen C3", "Opel Astra",
    "Toyota Yaris", "Audi A3", "Kia Ceed", "Skoda Fabia", "Suzuki Swift", "Volvo XC40",
    "Renault Zoe", "VW Polo", "Mazda CX-5", "Tesla", "Ford Focus", "Honda Jazz",
)  # fmt: skip

PHONES = (
    "Pixel 8", "iPhone 15", "Galaxy S23", "Fairphone 5", "OnePlus 12", "Xperia 10", "Moto G84",
    "iPhone SE", "Pixel 7a", "Galaxy A54", "Nokia G42", "Redmi Note 13", "Galaxy Z Flip",
    "iPhone 13 mini", "Pixel Fold", "Xiaomi 14", "Oppo Reno", "Honor Magic",
)  # fmt: skip

DRINKS = (
    "coffee", "green tea", "matcha", "espresso", "yerba mate", "rooibos", "hot chocolate",
    "chai", "black tea", "oolong", "flat whites", "cold brew", "peppermint tea",
    "turmeric latte", "decaf", "ginger tea", "barley tea", "kombucha", "cortado", "earl grey",
)  # fmt: skip

DIETS = (
    "vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "low-carb", "dairy-free",
    "paleo", "plant-based", "flexitarian", "sugar-free", "halal", "kosher",
)  # fmt: skip

EXERCISES = (
    "running", "swimming", "cycling", "yoga", "bouldering", "pilates", "rowing", "boxing",
    "tennis", "spinning", "hiking", "climbing", "salsa dancing", "badminton", "kettlebells",
    "padel", "orienteering", "aqua aerobics", "judo", "squash", "karate", "fencing",
)  # fmt: skip

LANGUAGES = (
    "Japanese", "Portuguese", "Italian", "Korean", "Mandarin", "Dutch", "Greek", "Turkish",
    "Polish", "Arabic", "Swedish", "Czech", "Hindi", "Finnish", "Spanish", "German", "Welsh",
    "Hebrew", "Vietnamese", "Norwegian", "Catalan", "Icelandic",
)  # fmt: skip

CUISINES = (
    "ramen", "paella", "pho", "lasagne", "biryani", "tacos", "dumplings", "moussaka",
    "pierogi", "shakshuka", "risotto", "katsu curry", "falafel", "pad thai", "goulash",
    "sushi", "bibimbap", "tagine", "laksa", "gnocchi", "empanadas", "pupusas", "jollof rice",
)  # fmt: skip

COMMUTES = (
    "by tram", "by bus", "by bike", "by train", "on foot", "by e-scooter", "by metro",
    "by ferry", "by car", "on a motorbike", "by carpool", "on rollerblades",
)  # fmt: skip

ALLERGENS = (
    "peanuts", "shellfish", "penicillin", "bee stings", "latex", "sesame", "kiwi",
    "tree nuts", "pollen", "strawberries", "mustard", "cashews", "ibuprofen", "eggs", "soy",
    "celery", "wasp stings", "lupin", "sulphites",
)  # fmt: skip

PET_NAMES = (
    "Biscuit", "Pepper", "Miso", "Luna", "Waffles", "Pickle", "Mango", "Juniper", "Ziggy",
    "Noodle", "Olive", "Tofu", "Bramble", "Clementine", "Rocket", "Marble", "Sprout", "Nacho",
    "Hazel", "Frodo", "Pumpkin", "Basil", "Dumpling", "Socks", "Turnip", "Maple",
)  # fmt: skip
PET_KINDS = (
    "greyhound", "tabby cat", "border collie", "rabbit", "beagle", "ginger kitten",
    "dachshund", "tortoise", "labrador", "guinea pig", "whippet", "spaniel",
)  # fmt: skip

INSTRUMENTS = (
    "cello", "piano", "ukulele", "saxophone", "violin", "drums", "bass guitar", "trumpet",
    "harp", "accordion", "flute", "banjo", "clarinet", "mandolin", "trombone", "oboe",
)  # fmt: skip

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def ordinal(n: int) -> str:
    """1 -> 1st, 2 -> 2nd, 11 -> 11th, 23 -> 23rd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_ORDINALS = tuple(ordinal(n) for n in range(1, 29))
_TIMES = ("8am", "9:30am", "10am", "11:15am", "noon", "1pm", "2:30pm", "3pm", "4:45pm",
          "5pm", "6pm", "7:30pm")  # fmt: skip
BIRTHDAYS = tuple(f"{m} {d}" for m, d in product(_MONTHS, _ORDINALS))
WHENS = tuple(f"{w} the {d} at {t}" for w, d, t in product(_WEEKDAYS, _ORDINALS, _TIMES))
