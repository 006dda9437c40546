# Three threads whose stacks YJIT compiled, for the runtime matrix (tests/matrix/rt_ruby.py)
# and tests/matrix/test_yjit.py. Run as
#
#     ruby --yjit --yjit-call-threshold=1 --yjit-perf ruby_yjit.rb
#
# so that every method is compiled at its first call and YJIT writes /tmp/perf-PID.map (one
# line per compiled block). Each thread is named (its OS thread name too); the program prints
# each one's stack as Ruby sees it, innermost first, labels joined by ";":
#
#     stack each: pop;each_inner;block in each_middle;each;each_middle;...
#
# - "each": calls through Array#each blocks (a C method that yields back into YJIT's code),
#   the innermost blocked in Thread::Queue#pop; its stack is the main thread's
#   Thread#backtrace_locations of it once it is blocked there;
# - "plain": plain nested method calls, blocked likewise, its stack taken likewise;
# - "spin": a call through an Array#each block, the innermost spinning in a loop (its stack is
#   read while it runs; a burst of 10^7 turns, entered again and again): it prints its own
#   (caller_locations) before it spins.
#
# Each chain runs once first without stopping, so that its methods and blocks are compiled
# before the stacks are read. Then a line "ready"; the process stays put until killed.
$stdout.sync = true
STOP = Thread::Queue.new # never pushed to: the blocked threads wait on it for good
TOLD = Thread::Queue.new
GO = Thread::Queue.new

def stack_line(name, locations)
  "stack #{name}: #{locations.map(&:label).join(';')}"
end

def tell(name, hold)
  TOLD << name if hold
end

def each_inner(y, hold)
  tell("each", hold)
  STOP.pop if hold
  y
end

def each_middle(x, hold)
  [x].each { |y| each_inner(y, hold) }
end

def each_outer(hold)
  [1].each { |x| each_middle(x, hold) }
end

def plain_inner(hold)
  tell("plain", hold)
  STOP.pop if hold
  1
end

def plain_middle(hold)
  plain_inner(hold) + 1
end

def plain_outer(hold)
  plain_middle(hold) + 1
end

def spin_inner(hold)
  i = 0
  while hold || i < 3
    i = spin_burst(hold, i)
  end
  i
end

# A burst of the spin: the loop is in spin_burst, entered again and again, so that if YJIT's
# code was left for the interpreter at an interrupt (see below), the next burst is YJIT's again.
def spin_burst(hold, i)
  if hold && i == 0 # the last to tell, once nothing else will want the GVL (see below)
    here = stack_line("spin", caller_locations(0))
    GO.pop
    puts here, "ready"
    return 1 # the rest of this call may be the interpreter's: the bursts start afresh
  end
  n = 0
  while n < (hold ? 10_000_000 : 1000)
    n += 1
  end
  i + 1
end

def spin_outer(hold)
  [hold].each { |h| spin_inner(h) }
end

def body(name, hold)
  case name
  when "each" then each_outer(hold)
  when "plain" then plain_outer(hold)
  else spin_outer(hold)
  end
end

def start(name, hold)
  Thread.new do
    Thread.current.name = name if hold
    body(name, hold)
  end
end

names = %w[each plain spin]
# Warm up: every chain once, to its end, in a thread as the one that will hold it.
names.each { |name| start(name, false).join }
threads = names.map { |name| start(name, true) }
# "each" and "plain" say they are about to block; once blocked in Queue#pop, the main thread
# reads their stacks.
2.times do
  name = TOLD.pop
  t = threads[names.index(name)]
  sleep 0.01 until t.status == "sleep" && t.backtrace_locations&.first&.label == "pop"
  puts stack_line(name, t.backtrace_locations)
end
# The spinning thread holds the GVL. A thread waiting for it would make the timer thread
# interrupt the spin, and YJIT leaves its code for the interpreter at an interrupt: so the
# spinning thread prints its stack and "ready" last, after the main thread has gone to sleep
# (GO is pushed just before), and from then on no thread wants the GVL and the loop stays in
# YJIT's code.
GO << 1
sleep
