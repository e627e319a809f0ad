import asyncio
import sys

import websockets

async def main(url):
    async with websockets.connect(url) as ws:
        async for message in ws:
            print(message)

asyncio.run(main(sys.argv[1]))
