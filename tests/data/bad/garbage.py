}}] lorem ipsum :: dolor ( sit amet = = "f32[
	@@@ 0x7f3a 9e8b torch.ops.??? <<>>
qwerty: "uiop" = = asdf(;
