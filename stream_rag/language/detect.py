"""The language a question is written in, from its function words: no model, no network.

A question of a few words has few clues, so only frequent words that belong to one language,
or to two at most, count ("wie", "der", "kann" German; "combien", "est-ce" French), as do the
letters only some languages write ("ß", "ñ", "ç", "ã") and word endings ("-zione"). A language
wins with a clear lead in clues (`_LEAST`, `_MARGIN`); otherwise, or for a script other than
Latin, the answer is None: the caller keeps its default. Languages read: English, German,
French, Spanish, Italian, Dutch, Portuguese (`LANGUAGES`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["LANGUAGES", "detect_language"]

_WORDS: dict[str, str] = {
    "en": """the a an is are was were do does did can could would should will what when where
        which who whom whose why how much many long my your our their this that these those
        there here have has of to for from with about into on at by it i you we they it's
        don't doesn't can't i'm not and or if any some get as well also be me need than then
        so after before just still yet""",
    "de": """der die das den dem des ein eine einen einem einer eines ist sind war wird werden
        kann können könnte muss müssen darf soll sollte wie was wann wo warum welche welcher
        welches wer wieviel wieviele viel viele lange ich du sie wir ihr mein meine meinen
        ihre ihren ihrem unser unsere nicht kein keine und oder mit für von zu zum zur bei
        auf aus nach über im am ins es gibt haben habe hat bekomme kostet kosten bitte noch
        auch schon dauert man""",
    "fr": """le la les un une des du de est sont était sera peut peuvent puis-je faut dois
        doit quel quelle quels quelles combien comment quand où pourquoi qui que qu'est-ce
        est-ce je tu il elle nous vous ils elles mon ma mes votre vos notre nos leur leurs
        ne pas et ou avec pour dans sur au aux en y a-t-il coûte coûtent faire avez avoir
        ai suis cette ce ces à aussi très""",
    "es": """el la los las un una unos unas es son era será puede pueden puedo debo hay cuál
        cuáles cuánto cuánta cuántos cuántas cuanto como cómo cuándo cuando dónde donde por
        qué quién quiénes yo tú él ella nosotros vosotros ellos mi mis su sus nuestro nuestra
        no y o con para en del al cuesta cuestan tengo tiene tienen hacer está están se""",
    "it": """il lo la gli le un uno una è sono era sarà può possono posso devo c'è ci quale
        quali quanto quanta quanti quante come quando dove perché chi che io tu lui lei noi
        voi loro mio mia miei mie suo sua nostro nostra non e o con per nel nella del della
        dei delle al alla costa costano ho ha hanno fare""",
    "nl": """de het een is zijn was wordt worden kan kunnen kun mag moet moeten wat wanneer
        waar waarom welke wie hoe hoeveel lang ik je jij u wij we jullie zij mijn jouw uw
        onze hun niet geen en of met voor van naar bij op uit over kost kosten heb heeft
        hebben er dit dat deze die""",
    "pt": """o a os as um uma uns umas é são era será pode podem posso devo há qual quais
        quanto quanta quantos quantas como quando onde porque por quê quem eu tu ele ela nós
        vós eles elas meu minha meus minhas seu sua nosso nossa não e ou com para em no na
        nos nas do da dos das ao à custa custam tenho tem têm fazer está estão""",
}
LANGUAGES = tuple(_WORDS)
# A word counts only for the languages it is frequent in; one shared by three or more
# ("la", "a", "no", "de") is too weak a clue to count at all.
_SHARED_BY = 2
_LEAST = 1.5  # clues the winner needs
_MARGIN = 1.0  # by how many it must lead the next language
_LETTERS: dict[str, str] = {
    "de": "äöüß",
    "fr": "çœêèëîïûùâ",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "it": "ì",
}
# Word endings frequent in one language only ("-zione" Italian, "-ción" Spanish).
_ENDINGS: dict[str, tuple[str, ...]] = {
    "de": ("ung", "keit", "heit", "lich", "schaft"),
    "nl": ("heid", "lijk", "tje"),
    "es": ("ción", "ciones", "dad"),
    "it": ("zione", "zioni", "mente"),
    "pt": ("ção", "ções", "agem"),
    "en": ("ing", "ness", "ship"),
    # French asks by inversion: "Livrez-vous ...?", "Puis-je ...?", "Quel temps fera-t-il ?"
    "fr": ("-t-il", "-t-elle", "-vous", "-je", "-nous", "-on", "-ils", "-elles"),
}
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _index() -> dict[str, frozenset[str]]:
    langs_of: dict[str, set[str]] = {}
    for lang, words in _WORDS.items():
        for word in words.split():
            langs_of.setdefault(word, set()).add(lang)
    return {w: frozenset(ls) for w, ls in langs_of.items() if len(ls) <= _SHARED_BY}


_LANGS_OF = _index()


@lru_cache(maxsize=4096)
def detect_language(text: str) -> str | None:
    """The language `text` is most likely in (an ISO 639-1 code of `LANGUAGES`), or None
    when the clues are too few or tie."""
    folded = unicodedata.normalize("NFC", text).casefold().replace("’", "'")
    words = _WORD.findall(folded)
    if not words or any(not ch.isascii() and _script(ch) != "LATIN" for w in words for ch in w):
        return None
    score = dict.fromkeys(LANGUAGES, 0.0)
    for word in words:
        for lang in _LANGS_OF.get(word, ()):
            # A word two languages share is half a clue for each.
            score[lang] += 1.0 / len(_LANGS_OF[word])
    for lang, letters in _LETTERS.items():
        if any(ch in letters for ch in folded):
            score[lang] += 1.0
    for lang, endings in _ENDINGS.items():
        if any(len(w) > len(e) + 2 and w.endswith(e) for w in words for e in endings):
            score[lang] += 1.0
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    # A clear lead: a wrong language is worse than the default one.
    if top < _LEAST or top - second < _MARGIN:
        return None
    return best


def _script(ch: str) -> str:
    return unicodedata.name(ch, "UNKNOWN").split(" ")[0]
