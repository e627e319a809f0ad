import sys

from PIL import Image, ImageDraw

src, dst, text = sys.argv[1:4]
img = Image.open(src).convert("RGBA")
draw = ImageDraw.Draw(img)
draw.text((10, img.height - 30), text, fill=(255, 255, 255, 160))
img.save(dst)
print(f"wrote {dst}")
