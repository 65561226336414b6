from flag_gems.ops.add import add, add_
from flag_gems.ops.cos import cos
from flag_gems.ops.cumsum import cumsum
from flag_gems.ops.mm import mm
from flag_gems.ops.softmax import softmax
from flag_gems.ops.softmax import softmax as safe_softmax
