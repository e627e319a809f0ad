#!/bin/sh
mkdir -p out
