#!/usr/bin/env node
import { main } from "./program.ts"

void main(process.argv)
