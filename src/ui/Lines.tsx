import { Box, Text } from 'ink';
import { fitLine, type Line, type Segment } from './line.js';

export interface LinesProps {
  lines: Line[];
  /** Columns; every line is cut to it (ending in `…`). */
  width: number;
  /** False: no colour, bold or dim at all — plain text only (NO_COLOR). */
  color: boolean;
}

const COLOURS = { good: 'green', warn: 'yellow', bad: 'red', accent: 'cyan' } as const;

function Piece({ s, color }: { s: Segment; color: boolean }) {
  if (!color || s.tone === 'plain') return <Text>{s.text}</Text>;
  if (s.tone === 'dim') return <Text dimColor>{s.text}</Text>;
  if (s.tone === 'bold') return <Text bold>{s.text}</Text>;
  return <Text color={COLOURS[s.tone]}>{s.text}</Text>;
}

/** Renders lines of toned segments, one terminal row each. */
export function Lines({ lines, width, color }: LinesProps) {
  return (
    <Box flexDirection="column" width={width}>
      {lines.map((line, i) => {
        const fitted = fitLine(line, width);
        // An empty Text takes no row; a space keeps the line.
        if (fitted.every((s) => s.text === '')) return <Text key={i}> </Text>;
        return (
          <Text key={i} wrap="truncate">
            {fitted.map((s, j) => (
              <Piece key={j} s={s} color={color} />
            ))}
          </Text>
        );
      })}
    </Box>
  );
}
