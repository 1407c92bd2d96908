# greedy-ruby: a 6 nimmt! bot in Ruby, with nothing but its standard library (json).
# Protocol: docs/protocol.md.
#
# Play: the card that goes onto a row with room (fewer than 5 cards) with the smallest
# gap to that row's end; if no card does, the lowest card. Row: the fewest heads.
# Draft: the lowest card on offer. Two cards a turn: the two best cards by that rule.
require "json"

NAME = "greedy-ruby"
VERSION = "1.0.0"

$stdout.sync = true # every answer leaves at once, not when a buffer fills

def heads(card)
  return 7 if card == 55
  return 5 if (card % 11).zero?
  return 3 if (card % 10).zero?
  return 2 if (card % 5).zero?
  1
end

# Sort key of a card: [0, gap] if it goes onto a row with room, else [1, card].
def key(card, rows)
  best = rows.select { |row| row.last < card }.max_by(&:last)
  return [0, card - best.last] if best && best.length < 5
  [1, card]
end

def ranked(cards, rows)
  cards.sort_by { |card| [*key(card, rows), card] }
end

def decide(kind, view, legal)
  rows = view["rows"] || []
  case kind
  when "play"
    if legal.first.is_a?(Array) # two cards a turn: legal lists every pair [a, b], a < b
      best = ranked(legal.flatten.uniq, rows).first(2).sort
      legal.find { |pair| pair == best } || legal.first
    else
      ranked(legal, rows).first
    end
  when "row"
    legal.min_by { |r| [rows[r].sum { |card| heads(card) }, rows[r].length, r] }
  when "draft"
    legal.min
  else
    legal.first
  end
end

def send_line(message)
  $stdout.write(JSON.generate(message) + "\n")
end

$stdin.each_line do |line|
  next if line.strip.empty?
  begin
    msg = JSON.parse(line)
  rescue JSON::ParserError
    warn "greedy-ruby: not JSON: #{line[0, 80]}"
    next
  end
  case msg["type"]
  when "hello"
    send_line(type: "hello", name: NAME, version: VERSION, accept: msg["game"] == "nimmt")
  when "request"
    send_line(type: "answer", id: msg["id"], answer: decide(msg["kind"], msg["view"] || {}, msg["legal"]))
  when "bye"
    break
  end
end
