import argparse

from pypdf import PdfReader, PdfWriter

ap = argparse.ArgumentParser()
ap.add_argument("op", choices=["merge", "split", "rotate"])
ap.add_argument("files", nargs="+")
ap.add_argument("-o", "--out", default="out.pdf")
args = ap.parse_args()

writer = PdfWriter()
for name in args.files:
    for page in PdfReader(name).pages:
        if args.op == "rotate":
            page.rotate(90)
        writer.add_page(page)
with open(args.out, "wb") as fh:
    writer.write(fh)
