"""Small real files for ``sentinel index`` tests: a PDF with a text layer, written with pypdf
(a page, Helvetica, one text line per paragraph line), and a handbook folder of every kind."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF whose text layer holds ``lines`` (ASCII), as a word processor writes it."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=612, height=792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    shown = " ".join(f"({_escape(line)}) Tj T*" for line in lines)
    stream = DecodedStreamObject()
    stream.set_data(f"BT /F1 11 Tf 14 TL 72 720 Td {shown} ET".encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(stream)
    with path.open("wb") as out:
        writer.write(out)
    return path


LEAVE = "Employees get 25 days of paid leave per year.\n\nLeave requests go to your manager.\n"
EXPENSES_HTML = (
    "<!doctype html><html><head><title>Expenses</title><style>p {color: red}</style></head>"
    "<body><h1>Travel expenses</h1><p>Travel expenses are reimbursed within 14 days of the "
    "receipt.</p><script>var secret = 'not text';</script></body></html>\n"
)
SECURITY_PDF = [
    "Laptops must use full-disk encryption.",
    "Report a lost laptop to the security desk within one hour.",
]
PARKING = "Parking permits are issued by the facilities team every January.\n"


def write_handbook(root: Path) -> Path:
    """``root/handbook``: leave.md, expenses.html, security/laptops.pdf, parking.txt and a
    file of an unknown kind (logo.png)."""
    handbook = root / "handbook"
    (handbook / "security").mkdir(parents=True, exist_ok=True)
    (handbook / "leave.md").write_text(LEAVE, encoding="utf-8")
    (handbook / "expenses.html").write_text(EXPENSES_HTML, encoding="utf-8")
    (handbook / "parking.txt").write_text(PARKING, encoding="utf-8")
    write_pdf(handbook / "security" / "laptops.pdf", SECURITY_PDF)
    (handbook / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return handbook
