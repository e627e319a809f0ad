#!/bin/sh
npm ci
npx -y prettier@3.3.3 --check .
