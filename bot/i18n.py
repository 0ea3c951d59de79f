"""The bot's own words in French and English, chosen from the user's Telegram language."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "refused": "Sorry, this is a private assistant. You are not on its allowlist.",
        "start": "Hello {name}! I'm Elora, your assistant with a memory you can trust. Send me a message, or /help.",
        "help": (
            "<b>Elora</b> — what I can do:\n"
            "• Just write: I answer from what I remember, with sources.\n"
            "• /remember TEXT — keep something now\n"
            "• /forget ID or words — forget a memory (with confirmation)\n"
            "• /topics — what I remember, by topic\n"
            "• /proposals — memories I'd like to keep, for your review\n"
            "• /council QUESTION [--skills a,b,c] — ask a panel of experts\n"
            "• /private on|off — keep nothing beyond this session\n"
            "• /new — start a fresh conversation\n"
            "• /status — spend, models, queues\n"
            "Send a text, Markdown or PDF file and ask about it. React 👍 or 👎 to my replies."
        ),
        "new": "New conversation. Session memory cleared.",
        "remember_usage": "Usage: /remember TEXT",
        "remembered": "Remembered as <code>{id}</code> ({tier}).",
        "remembered_again": "Already remembered — confirmed <code>{id}</code> (said {n} times).",
        "forget_usage": "Usage: /forget MEMORY_ID or /forget words to search",
        "forget_confirm": "Forget <code>{id}</code>?\n<i>{text}</i>\nThis cannot be undone.",
        "forget_confirm_undo": (
            "Forget <code>{id}</code>?\n<i>{text}</i>\nUndo stays available for {n} minutes while "
            "I run; nothing of it is kept on disk."
        ),
        "forget_messages_no_undo": "Erasing the messages too cannot be undone.",
        "forgotten_undo": (
            "Forgotten: <code>{id}</code>. Undo available for {n} minutes while I run; nothing "
            "of it is kept on disk."
        ),
        "undo": "↩️ Undo ({n} min)",
        "undone": "↩️ Undone: {what}",
        "undo_failed": "Could not undo: {why}",
        "forget_pick": "Which memory should I forget?",
        "forget_none": "I found no memory matching that.",
        "forgotten": "Forgotten: <code>{id}</code>.",
        "forget_messages_note": "{n} archived message(s) contain it or are where it came from.",
        "forget_with_messages": "Yes, and erase the {n} messages that contain it",
        "forgotten_with_messages": "Forgotten: <code>{id}</code>, and {n} message(s) erased with it.",
        "cancelled": "Cancelled.",
        "yes_forget": "Yes, forget it",
        "cancel": "Cancel",
        "topics_none": "I don't remember anything yet.",
        "topics_title": "<b>What I remember</b> (★ importance, 1 to 5)",
        "proposals_none": "No proposals waiting for review.",
        "approve": "Approve",
        "reject": "Reject",
        "approved": "Approved → <code>{id}</code>",
        "rejected": "Rejected (you can restore it from the cockpit).",
        "council_usage": "Usage: /council QUESTION [--skills a,b,c]",
        "council_started": "Council convened: {n} experts, {rounds} rounds…",
        "council_round": "Council: round {round}/{rounds} done ({ok} contributions{failed}).",
        "private_usage": "Usage: /private on|off",
        "private_on": "Private mode on: nothing from this chat is kept beyond the session.",
        "private_off": "Private mode off: messages are archived again.",
        "status": (
            "<b>Status</b>\nSpend today: ${spend:.4f}{cap}\nModels: {models}\n"
            "Spool backlog: {spool}\nProposals waiting: {proposals}"
        ),
        "status_cap": " / ${cap:.2f}",
        "doc_too_big": "That file is too large ({size:.1f} MB; limit {limit:.0f} MB).",
        "doc_rejected": "I can't read that file: {reason}",
        "doc_received": "📎 Got <b>{name}</b> ({chars} characters). Ask me anything about it.",
        "apology": "Sorry, something went wrong on my side. Your message is saved; please try again.",
        "saving_delayed": "(The database is busy: this exchange is kept safe on disk and will be saved shortly.)",
        "thanks_feedback": "Thanks for the feedback.",
        "unknown_command": "Unknown command. See /help.",
    },
    "fr": {
        "refused": "Désolée, je suis une assistante privée : vous n'êtes pas sur la liste autorisée.",
        "start": "Bonjour {name} ! Je suis Elora, ton assistante à la mémoire fiable. Écris-moi, ou /help.",
        "help": (
            "<b>Elora</b> — ce que je sais faire :\n"
            "• Écris simplement : je réponds avec ce dont je me souviens, sources à l'appui.\n"
            "• /remember TEXTE — retenir quelque chose tout de suite\n"
            "• /forget ID ou mots — oublier un souvenir (avec confirmation)\n"
            "• /topics — ce dont je me souviens, par thème\n"
            "• /proposals — les souvenirs que je propose de garder, à valider\n"
            "• /council QUESTION [--skills a,b,c] — consulter un panel d'experts\n"
            "• /private on|off — ne rien garder au-delà de la session\n"
            "• /new — repartir sur une nouvelle conversation\n"
            "• /status — dépenses, modèles, files d'attente\n"
            "Envoie un fichier texte, Markdown ou PDF et pose tes questions. Réagis 👍 ou 👎 à mes réponses."
        ),
        "new": "Nouvelle conversation. Mémoire de session effacée.",
        "remember_usage": "Usage : /remember TEXTE",
        "remembered": "C'est noté sous <code>{id}</code> ({tier}).",
        "remembered_again": "Déjà retenu — confirmé <code>{id}</code> (dit {n} fois).",
        "forget_usage": "Usage : /forget ID_MÉMOIRE ou /forget mots à chercher",
        "forget_confirm": "Oublier <code>{id}</code> ?\n<i>{text}</i>\nC'est irréversible.",
        "forget_confirm_undo": (
            "Oublier <code>{id}</code> ?\n<i>{text}</i>\nAnnulable pendant {n} minutes tant que je "
            "tourne ; rien n'en est gardé sur disque."
        ),
        "forget_messages_no_undo": "Effacer aussi les messages est irréversible.",
        "forgotten_undo": (
            "Oublié : <code>{id}</code>. Annulable pendant {n} minutes tant que je tourne ; rien "
            "n'en est gardé sur disque."
        ),
        "undo": "↩️ Annuler ({n} min)",
        "undone": "↩️ Annulé : {what}",
        "undo_failed": "Impossible d'annuler : {why}",
        "forget_pick": "Quel souvenir dois-je oublier ?",
        "forget_none": "Je n'ai trouvé aucun souvenir correspondant.",
        "forgotten": "Oublié : <code>{id}</code>.",
        "forget_messages_note": "{n} message(s) archivé(s) le contiennent ou en sont la source.",
        "forget_with_messages": "Oui, et effacer les {n} messages qui le contiennent",
        "forgotten_with_messages": "Oublié : <code>{id}</code>, et {n} message(s) effacé(s) avec.",
        "cancelled": "Annulé.",
        "yes_forget": "Oui, oublier",
        "cancel": "Annuler",
        "topics_none": "Je ne me souviens encore de rien.",
        "topics_title": "<b>Ce dont je me souviens</b> (★ importance, de 1 à 5)",
        "proposals_none": "Aucune proposition en attente.",
        "approve": "Valider",
        "reject": "Rejeter",
        "approved": "Validé → <code>{id}</code>",
        "rejected": "Rejeté (restaurable depuis le cockpit).",
        "council_usage": "Usage : /council QUESTION [--skills a,b,c]",
        "council_started": "Conseil réuni : {n} experts, {rounds} tours…",
        "council_round": "Conseil : tour {round}/{rounds} terminé ({ok} contributions{failed}).",
        "private_usage": "Usage : /private on|off",
        "private_on": "Mode privé activé : rien de ce chat n'est gardé au-delà de la session.",
        "private_off": "Mode privé désactivé : les messages sont de nouveau archivés.",
        "status": (
            "<b>État</b>\nDépenses du jour : {spend:.4f} ${cap}\nModèles : {models}\n"
            "Spool en attente : {spool}\nPropositions en attente : {proposals}"
        ),
        "status_cap": " / {cap:.2f} $",
        "doc_too_big": "Ce fichier est trop gros ({size:.1f} Mo ; limite {limit:.0f} Mo).",
        "doc_rejected": "Je ne peux pas lire ce fichier : {reason}",
        "doc_received": "📎 Bien reçu <b>{name}</b> ({chars} caractères). Pose-moi tes questions.",
        "apology": "Désolée, un problème est survenu de mon côté. Ton message est sauvegardé ; réessaie.",
        "saving_delayed": "(La base de données est occupée : cet échange est gardé en lieu sûr et sera enregistré sous peu.)",
        "thanks_feedback": "Merci pour le retour.",
        "unknown_command": "Commande inconnue. Voir /help.",
    },
}

COMMANDS = {
    "en": [
        ("start", "Say hello"),
        ("help", "What Elora can do"),
        ("new", "Start a fresh conversation"),
        ("remember", "Remember something now"),
        ("forget", "Forget a memory"),
        ("topics", "What Elora remembers"),
        ("proposals", "Review memories Elora proposes"),
        ("council", "Ask a panel of experts"),
        ("private", "Private mode on|off"),
        ("status", "Spend, models and queues"),
    ],
    "fr": [
        ("start", "Dire bonjour"),
        ("help", "Ce que sait faire Elora"),
        ("new", "Nouvelle conversation"),
        ("remember", "Retenir quelque chose"),
        ("forget", "Oublier un souvenir"),
        ("topics", "Ce dont Elora se souvient"),
        ("proposals", "Valider les souvenirs proposés"),
        ("council", "Consulter un panel d'experts"),
        ("private", "Mode privé on|off"),
        ("status", "Dépenses, modèles, files"),
    ],
}


def language_of(language_code: str | None, setting: str = "auto") -> str:
    """fr when the setting says so or the user's Telegram language starts with fr; else en."""
    if setting in ("fr", "en"):
        return setting
    return "fr" if (language_code or "").lower().startswith("fr") else "en"


def text(lang: str, key: str, **values) -> str:
    """One bot text in a language, formatted."""
    return TEXTS[lang][key].format(**values)
