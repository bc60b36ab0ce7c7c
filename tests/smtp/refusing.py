"""An aiosmtpd handler for the tests: a Maildir, as aiosmtpd.handlers.Mailbox writes, whose
server refuses for good (550) every recipient whose local part starts with "refused"."""

from aiosmtpd.handlers import Mailbox


class Refusing(Mailbox):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.split("@", 1)[0].startswith("refused"):
            return "550 5.1.1 <%s>: no such mailbox here" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"
